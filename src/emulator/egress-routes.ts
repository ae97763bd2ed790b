// Transparent egress to the host's own addresses, for clients that ignore proxy variables (the OpenClaw
// node's WebSocket is one). When a policy names an address of the host explicitly (egress-policy.ts
// `directDestinations`: an IP literal or a subnet in any spelling, read canonically as the proxy reads
// them, so `::ffff:10.0.0.1` routes 10.0.0.1; e.g. a gateway bound to a test host's address), the
// session's network namespace gets a veth link to the host and a /32 route to each such address, and
// nothing else: no default route, no address on the host's end, so the sandbox reaches exactly the named
// addresses (the host accepts packets for its own addresses on any interface) and never forwards beyond
// them. A policy update replaces the routes at once, for running commands too. The link dies with the
// namespace. Everything else still leaves only through the session's proxy (isolation.ts). An address whose
// allow entry has request rules (transform, forwardURL, response) gets no direct route: as on Vercel, where every
// connection passes the firewall, its traffic must go through the proxy that applies them (egress-intercept.ts).
import { execFile } from "node:child_process";
import { readFile, writeFile } from "node:fs/promises";
import { promisify } from "node:util";
import { hostAddresses } from "../infra/index.js";
import { directDestinations, egressRules, namesAnyAddress } from "./egress-policy.js";
import { rulesFor } from "./egress-rules.js";
import type { SessionRecord } from "./registry.js";

const run = promisify(execFile);

/**
 * Sandbox-side addresses come from the benchmarking range (RFC 2544), rarely used by real networks, and
 * are derived from the host end's interface index, which the kernel keeps unique across processes.
 */
const POOL_BASE = (198 << 24) | (18 << 16);
const POOL_SIZE = 1 << 17;
let next = 1;

interface DirectLink {
  host: string;
  sandboxIp: string;
  routes: Set<string>;
}

const links = new WeakMap<SessionRecord, Promise<DirectLink>>();
const updates = new WeakMap<SessionRecord, Promise<void>>();

function ipOf(n: number): string {
  return [n >>> 24, (n >>> 16) & 255, (n >>> 8) & 255, n & 255].join(".");
}

async function inSandboxNet(session: SessionRecord, args: string[]): Promise<void> {
  await run("nsenter", ["-t", String(session.holder!.pid), "-n", "ip", ...args]);
}

/** A kernel without IPv6 has no link-local addresses to disable. */
function ignoreMissingIpv6(error: NodeJS.ErrnoException): void {
  if (error.code !== "ENOENT") throw error;
}

async function createLink(session: SessionRecord): Promise<DirectLink> {
  // Interface names are at most 15 characters and unique per emulator process.
  const id = `v${process.pid.toString(36)}x${(next++).toString(36)}`;
  const host = `${id}h`;
  const peer = `${id}s`;
  await run("ip", ["link", "add", host, "type", "veth", "peer", "name", peer, "netns", String(session.holder!.pid)]);
  const ifindex = Number(await readFile(`/sys/class/net/${host}/ifindex`, "utf8"));
  const sandboxIp = ipOf(POOL_BASE + 1 + (ifindex % (POOL_SIZE - 2)));
  // No IPv6 on the link: its automatic link-local addresses would be a path to every host service on `::`.
  await writeFile(`/proc/sys/net/ipv6/conf/${host}/disable_ipv6`, "1").catch(ignoreMissingIpv6);
  await run("nsenter", [
    "-t",
    String(session.holder!.pid),
    "-n",
    "sh",
    "-c",
    `[ ! -e /proc/sys/net/ipv6/conf/${peer} ] || echo 1 > /proc/sys/net/ipv6/conf/${peer}/disable_ipv6`,
  ]);
  await run("ip", ["link", "set", host, "up"]);
  await run("ip", ["route", "replace", `${sandboxIp}/32`, "dev", host]);
  await inSandboxNet(session, ["addr", "add", `${sandboxIp}/32`, "dev", peer]);
  await inSandboxNet(session, ["link", "set", peer, "up"]);
  return { host: peer, sandboxIp, routes: new Set() };
}

async function apply(session: SessionRecord): Promise<void> {
  if (!session.holder || session.status !== "running") return;
  const rules = egressRules(session.networkPolicy);
  // Most policies name no address: no need to ask the kernel for the host's addresses then.
  if (!namesAnyAddress(rules) && !links.has(session)) return;
  const wanted = new Set(
    directDestinations(rules, await hostAddresses()).filter(
      (address) => rulesFor(session.networkPolicy, address).length === 0,
    ),
  );
  if (wanted.size === 0 && !links.has(session)) return;
  const { host, sandboxIp, routes } = await linkOf(session);
  for (const address of [...routes].filter((a) => !wanted.has(a))) {
    await inSandboxNet(session, ["route", "del", `${address}/32`, "dev", host]);
    routes.delete(address);
  }
  for (const address of [...wanted].filter((a) => !routes.has(a))) {
    await inSandboxNet(session, ["route", "replace", `${address}/32`, "dev", host, "src", sandboxIp]);
    routes.add(address);
  }
}

/** Brings the session's direct routes in line with its current policy; calls are applied in order. */
export function syncDirectRoutes(session: SessionRecord): Promise<void> {
  const previous = updates.get(session) ?? Promise.resolve();
  const current = previous.catch(() => undefined).then(() => apply(session));
  updates.set(session, current);
  return current;
}

function linkOf(session: SessionRecord): Promise<DirectLink> {
  let link = links.get(session);
  if (!link) {
    link = createLink(session);
    links.set(session, link);
    link.catch(() => links.delete(session));
  }
  return link;
}

/** The addresses a session currently reaches directly (diagnostics and NO_PROXY). */
export async function directRoutesOf(session: SessionRecord): Promise<string[]> {
  const link = links.get(session);
  return link ? [...(await link.catch(() => ({ routes: new Set<string>() }))).routes].sort() : [];
}
