// The host-side filter of the direct-egress links (egress-routes.ts). A socket in the sandbox bound to its link
// (SO_BINDTODEVICE) ignores the sandbox's routes, and the host answers for all of its addresses on any interface,
// so routes alone would let the sandbox reach every host address and port. The filter sits where the sandbox
// cannot touch it, in the host's network namespace: one nftables table per emulator process
// (`inet vsb_emulator_<pid>`, shared by the emulators one process may run) with
// - a set `links` of the host ends of its links and a set `allowed` of (host end . IPv4 address) pairs;
// - an input chain that accepts from a link only what goes to a pair of `allowed` and drops the rest, IPv6 and
//   broadcast included (policy entries name addresses, never ports: the address is the whole rule);
// - a forward chain that drops everything from or to a link, so nothing is forwarded beyond the host.
// Drop is final across tables, so another table's accept cannot reopen what this one drops. Every change is one
// `nft -f` transaction, and changes run one at a time. A link's name joins `links` before the link exists and
// leaves it after the link is gone, so no packet from it is ever unfiltered. The table is made with the
// process's first link and lives while an emulator of the process is open or a link has an entry; a table whose
// emulator died without removing it is swept at the next emulator's start (`openEgressFilter`), never a live
// process's.
import { hasHostTool, runHost } from "./host-spawn.js";

/** Thrown when the host refuses a filter change: the direct link it was for must not be used. */
export class EgressFilterError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = "EgressFilterError";
  }
}

const TABLE_PREFIX = "vsb_emulator_";
const IFNAME = /^[a-z0-9]{1,15}$/;
const IPV4 = /^(?:\d{1,3}\.){3}\d{1,3}$/;

/** The nftables table of the emulator process `pid`. */
export function filterTableName(pid: number): string {
  return `${TABLE_PREFIX}${pid}`;
}

function checked(values: Iterable<string>, pattern: RegExp): string[] {
  const list = [...values];
  const bad = list.find((value) => !pattern.test(value));
  if (bad !== undefined) throw new EgressFilterError(`not a filter value: ${JSON.stringify(bad)}`);
  return list;
}

/**
 * The transaction that makes sure the table, its sets and its rules are there, keeping the sets' elements:
 * every link's creation runs it, so a table removed from outside comes back (with no element: what came
 * from the other links is then dropped). `fresh` first removes a table of the same name, a dead process's.
 */
export function tableScript(table: string, fresh = false): string {
  const t = `inet ${table}`;
  return [
    ...(fresh ? [`add table ${t}`, `delete table ${t}`] : []),
    `add table ${t}`,
    `add set ${t} links { type ifname; }`,
    `add set ${t} allowed { type ifname . ipv4_addr; }`,
    `add chain ${t} input { type filter hook input priority filter - 10; policy accept; }`,
    `flush chain ${t} input`,
    `add rule ${t} input iifname @links iifname . ip daddr @allowed accept`,
    `add rule ${t} input iifname @links drop`,
    `add chain ${t} forward { type filter hook forward priority filter - 10; policy accept; }`,
    `flush chain ${t} forward`,
    `add rule ${t} forward iifname @links drop`,
    `add rule ${t} forward oifname @links drop`,
    "",
  ].join("\n");
}

export interface LinkChange {
  /** Host-end interface name. */
  link: string;
  /** The link joins `links` (before it exists). */
  join?: boolean;
  /** The link leaves `links` (after it is gone). */
  leave?: boolean;
  add?: Iterable<string>;
  remove?: Iterable<string>;
}

/** The transaction of one link's change: removals first (one transaction, so the order is only for reading). */
export function linkScript(table: string, change: LinkChange): string {
  const [link] = checked([change.link], IFNAME);
  const pairs = (addresses: Iterable<string> | undefined) =>
    checked(addresses ?? [], IPV4)
      .map((address) => `"${link}" . ${address}`)
      .join(", ");
  const lines: string[] = [];
  const remove = pairs(change.remove);
  const add = pairs(change.add);
  if (change.join) lines.push(`add element inet ${table} links { "${link}" }`);
  if (remove) lines.push(`delete element inet ${table} allowed { ${remove} }`);
  if (add) lines.push(`add element inet ${table} allowed { ${add} }`);
  if (change.leave) lines.push(`delete element inet ${table} links { "${link}" }`);
  return lines.length ? `${lines.join("\n")}\n` : "";
}

/** The emulator tables in `nft list tables` output whose process is gone (never `own`'s). */
export function staleTables(listing: string, own: number, alive: (pid: number) => boolean): string[] {
  const names = listing.split("\n").map((line) => line.trim().match(/^table inet (vsb_emulator_(\d+))$/));
  return names
    .filter((m): m is RegExpMatchArray => m !== null && Number(m[2]) !== own && !alive(Number(m[2])))
    .map((m) => m[1]!);
}

async function nft(script: string): Promise<void> {
  try {
    await runHost("nft", ["-f", "-"], { input: script });
  } catch (error) {
    const detail = String((error as { stderr?: string }).stderr ?? (error as Error).message).trim();
    throw new EgressFilterError(`nft refused the direct-egress filter: ${detail}`, { cause: error });
  }
}

const table = filterTableName(process.pid);
/** Host ends with an entry in this process's table. */
const members = new Set<string>();
/** Open emulators of this process: the table stays while one is open or a link has an entry. */
let users = 0;
/** Whether this process made its table (it is removed when the last user and the last link are gone). */
let tableUp = false;
let queue: Promise<unknown> = Promise.resolve();

/** Runs filter changes one at a time: the table's creation and removal must not interleave with a link's change. */
function serially<T>(step: () => Promise<T>): Promise<T> {
  const result = queue.then(step);
  queue = result.catch(() => undefined);
  return result;
}

async function dropTableIfUnused(): Promise<void> {
  if (users > 0 || members.size > 0 || !tableUp) return;
  tableUp = false;
  await nft(`delete table inet ${table}\n`);
}

/**
 * Applies one link's change. The table is made with the process's first link (replacing a dead process's
 * of the same name) and then kept, so a link costs one small transaction; a table removed from outside is
 * made again by the next link's creation (its other links' entries are gone with it: they are dropped).
 */
export function changeLinkFilter(change: LinkChange): Promise<void> {
  return serially(async () => {
    try {
      const script = linkScript(table, change);
      if (!tableUp) {
        await nft(tableScript(table, true) + script);
        tableUp = true;
      } else if (change.join) {
        await nft(script).catch(() => nft(tableScript(table) + script));
      } else {
        await nft(script);
      }
      if (change.join) members.add(change.link);
    } finally {
      // A link that leaves is gone whether or not its entry went: an entry left behind only ever drops.
      if (change.leave) members.delete(change.link);
    }
    await dropTableIfUnused();
  });
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}

/**
 * At an emulator's start: it uses the table from now on, and tables of emulator processes that are gone are
 * removed (best effort: a leftover table only ever drops what comes from interfaces that no longer exist).
 */
export function openEgressFilter(): Promise<void> {
  users++;
  if (!hasHostTool("nft")) return Promise.resolve();
  return serially(async () => {
    const { stdout } = await runHost("nft", ["list", "tables"]);
    // One transaction each: another emulator's sweep may remove the same table first.
    for (const name of staleTables(stdout, process.pid, alive)) {
      await nft(`delete table inet ${name}\n`).catch(() => undefined);
    }
  }).catch(() => undefined);
}

/** At an emulator's close, after its sessions stopped: the table goes once no emulator and no link needs it. */
export function closeEgressFilter(): Promise<void> {
  users--;
  return serially(dropTableIfUnused).catch(() => undefined);
}
