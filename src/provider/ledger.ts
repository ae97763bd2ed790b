// The provider's own durable memory (external plugins get no host state store): which leases core has
// destroyed. A tombstone is the proof `maintain` needs before it may delete a sandbox that carries our
// tags, and it stops a late provision replay from resurrecting a destroyed lease.
//
// The file must never stand between core and a teardown, so:
// - a damaged file is reported once, moved aside (`leases.json.corrupt-<ms>`) for the operator, and rebuilt;
// - a failed write is logged and does not poison later writes (memory keeps the tombstone meanwhile);
// - writes are durable: temp file, fsync, rename, fsync of the directory; private (0600);
// - a write merges with what is on disk (re-read + union under one in-process queue per file), so two
//   provider instances on one file keep each other's tombstones.
import * as nodeFs from "node:fs/promises";
import { dirname, join } from "node:path";
import { messageOf } from "./redact.js";

export interface Tombstone {
  sandboxName: string;
  destroyedAt: number;
  /** Set once a later lookup proved the sandbox absent. */
  provenAbsentAt?: number;
}

type Tombstones = Record<string, Tombstone>;

interface LedgerFile {
  version: 1;
  tombstones: Tombstones;
}

/** The file operations the ledger uses; tests wrap the real ones to observe order or fail one. */
export type LedgerFs = Pick<typeof nodeFs, "mkdir" | "open" | "readFile" | "rename" | "unlink">;

export interface LedgerLogger {
  warn(message: string): void;
}

export interface LedgerOptions {
  logger?: LedgerLogger;
  fs?: LedgerFs;
}

const MAX_TOMBSTONES = 4096;

/** Writes to one path from any number of ledgers in this process run one at a time. */
const fileQueues = new Map<string, Promise<unknown>>();

function queued<T>(file: string, task: () => Promise<T>): Promise<T> {
  const run = (fileQueues.get(file) ?? Promise.resolve()).then(task, task);
  const tail = run.catch(() => undefined);
  fileQueues.set(file, tail);
  void tail.then(() => {
    if (fileQueues.get(file) === tail) fileQueues.delete(file);
  });
  return run;
}

/** Changes whenever the file is replaced or rewritten; "absent" when there is none (or it cannot be seen). */
async function signatureOf(file: string): Promise<string> {
  try {
    const stat = await nodeFs.stat(file);
    return `${stat.ino}:${stat.size}:${stat.mtimeMs}`;
  } catch {
    return "absent";
  }
}

class DamagedLedgerError extends Error {
  override readonly name = "DamagedLedgerError";
}

function parseLedger(text: string): Tombstones {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw new DamagedLedgerError("it is not valid JSON");
  }
  const file = parsed as Partial<LedgerFile> | null;
  if (file?.version !== 1 || typeof file.tombstones !== "object" || file.tombstones === null) {
    throw new DamagedLedgerError("it is not a version 1 lease ledger");
  }
  const out: Tombstones = {};
  for (const [leaseId, t] of Object.entries(file.tombstones)) {
    if (t && typeof t.sandboxName === "string" && typeof t.destroyedAt === "number") out[leaseId] = t;
  }
  return out;
}

/** Union of two views of the ledger: every tombstone of either, absence proven if either proved it. */
function merge(into: Tombstones, from: Tombstones): void {
  for (const [leaseId, theirs] of Object.entries(from)) {
    const ours = into[leaseId];
    if (!ours) into[leaseId] = { ...theirs };
    else if (ours.provenAbsentAt === undefined && theirs.provenAbsentAt !== undefined) {
      ours.provenAbsentAt = theirs.provenAbsentAt;
    }
  }
}

export class LeaseLedger {
  private tombstones: Tombstones = {};
  private loaded: Promise<void> | undefined;
  /** The file's identity, size and time when it was last merged into memory. */
  private seen: string | undefined;
  private readonly fs: LedgerFs;
  private readonly logger: LedgerLogger;

  /** Without a file the ledger lives in memory (tests, or a host that gives the plugin no state dir). */
  constructor(
    private readonly file?: string,
    options: LedgerOptions = {},
  ) {
    this.fs = options.fs ?? nodeFs;
    this.logger = options.logger ?? { warn: (message) => console.warn(message) };
  }

  static inDirectory(stateDir: string | undefined, options: LedgerOptions = {}): LeaseLedger {
    return new LeaseLedger(stateDir ? join(stateDir, "vercel-sandbox", "leases.json") : undefined, options);
  }

  /** Loads once; never rejects (a damaged file is quarantined and the ledger starts empty). */
  private load(): Promise<void> {
    this.loaded ??= this.readFromDisk();
    return this.loaded;
  }

  /**
   * Another provider instance on this state dir (a second gateway process, a CLI) may have buried a lease
   * since this one read the file: a lookup that misses reads the file again if it changed, so a destroyed
   * lease is never re-created here because of a stale memory.
   */
  private async refresh(): Promise<void> {
    if (this.file && (await signatureOf(this.file)) !== this.seen) await this.readFromDisk();
  }

  private async readFromDisk(): Promise<void> {
    const file = this.file;
    if (!file) return;
    const signature = await signatureOf(file);
    merge(this.tombstones, await queued(file, () => this.readOrQuarantine(file)));
    this.seen = signature;
  }

  /** The tombstones on disk; a damaged file is reported, renamed aside, and read as empty. */
  private async readOrQuarantine(file: string): Promise<Tombstones> {
    let reason: string;
    try {
      return parseLedger(await this.fs.readFile(file, "utf8"));
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === "ENOENT") return {};
      reason = error instanceof DamagedLedgerError ? error.message : `it cannot be read (${messageOf(error)})`;
    }
    const aside = `${file}.corrupt-${Date.now()}`;
    try {
      await this.fs.rename(file, aside);
      this.logger.warn(
        `vercel-sandbox lease ledger ${file} is damaged (${reason}); moved it to ${aside} and started a new one`,
      );
    } catch (error) {
      this.logger.warn(
        `vercel-sandbox lease ledger ${file} is damaged (${reason}) and could not be moved aside ` +
          `(${messageOf(error)}); tombstones are kept in memory until it can be replaced`,
      );
    }
    return {};
  }

  /** Persists the union of memory and disk; a failure is logged and left to the next write to repair. */
  private async persist(): Promise<void> {
    const file = this.file;
    if (!file) return;
    try {
      await queued(file, async () => {
        merge(this.tombstones, await this.readOrQuarantine(file));
        this.evict();
        await this.writeDurably(file, `${JSON.stringify({ version: 1, tombstones: this.tombstones })}\n`);
      });
    } catch (error) {
      this.logger.warn(
        `vercel-sandbox could not write the lease ledger ${file} (${messageOf(error)}); ` +
          "its tombstones are kept in memory and written with the next change",
      );
    }
  }

  private async writeDurably(file: string, body: string): Promise<void> {
    const dir = dirname(file);
    await this.fs.mkdir(dir, { recursive: true, mode: 0o700 });
    const temp = `${file}.${process.pid}.${Math.random().toString(36).slice(2)}.tmp`;
    const handle = await this.fs.open(temp, "w", 0o600);
    try {
      try {
        await handle.writeFile(body);
        await handle.sync();
      } finally {
        await handle.close();
      }
      await this.fs.rename(temp, file);
    } catch (error) {
      await this.fs.unlink(temp).catch(() => undefined);
      throw error;
    }
    // The rename itself is durable only once the directory entry is.
    const dirHandle = await this.fs.open(dir, "r");
    try {
      await dirHandle.sync();
    } finally {
      await dirHandle.close();
    }
  }

  async tombstone(leaseId: string): Promise<Tombstone | undefined> {
    await this.load();
    if (!this.tombstones[leaseId]) await this.refresh();
    return this.tombstones[leaseId];
  }

  async all(): Promise<Array<[string, Tombstone]>> {
    await this.load();
    await this.refresh();
    return Object.entries(this.tombstones);
  }

  async bury(leaseId: string, sandboxName: string, now = Date.now()): Promise<void> {
    await this.load();
    if (this.tombstones[leaseId]) return;
    this.tombstones[leaseId] = { sandboxName, destroyedAt: now };
    this.evict();
    await this.persist();
  }

  async markAbsent(leaseId: string, now = Date.now()): Promise<void> {
    await this.load();
    const entry = this.tombstones[leaseId];
    if (!entry || entry.provenAbsentAt) return;
    entry.provenAbsentAt = now;
    await this.persist();
  }

  /** Forget the oldest proven-absent tombstones once the ledger is full; unproven ones are kept. */
  private evict(): void {
    const entries = Object.entries(this.tombstones);
    if (entries.length <= MAX_TOMBSTONES) return;
    const proven = entries
      .filter(([, t]) => t.provenAbsentAt !== undefined)
      .sort(([, a], [, b]) => a.destroyedAt - b.destroyedAt);
    for (const [leaseId] of proven.slice(0, entries.length - MAX_TOMBSTONES)) delete this.tombstones[leaseId];
  }
}
