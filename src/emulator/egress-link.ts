// The kernel side of a direct-egress link (egress-routes.ts decides when): a veth pair whose host end stays in
// the host's network namespace, filtered there (egress-filter.ts), and whose peer lives in the sandbox's. The
// sandbox's namespace is entered only through a descriptor of it opened once, when the link is made, while the
// session's holder is known to be alive: a later entry by pid could land in another process's namespace once
// the holder is gone and its pid reused. Every program runs by absolute path with a fixed environment
// (host-spawn.ts); the descriptor reaches it as fd 3 (`/proc/self/fd/3`).

import type { FileHandle } from "node:fs/promises";
import { open, readFile, writeFile } from "node:fs/promises";
import { hostTool, runHost, spawnHost } from "./host-spawn.js";
import type { NetnsHandle } from "./netns-entry.js";

/** Thrown when a direct link cannot be made or changed (the command or policy update that needed it fails). */
export class DirectLinkError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = "DirectLinkError";
  }
}

/**
 * Sandbox-side addresses come from the benchmarking range (RFC 2544), rarely used by real networks, and
 * are derived from the host end's interface index, which the kernel keeps unique across processes.
 */
const POOL_BASE = (198 << 24) | (18 << 16);
const POOL_SIZE = 1 << 17;
const STEP_TIMEOUT_MS = 30_000;
const NS_FD = "/proc/self/fd/3";
let next = 1;

export interface LinkEnds {
  /** The sandbox's network namespace, held open for the link's life (it keeps the namespace alive: close it). */
  ns: FileHandle;
  /** Host end (in the host's namespace, the filter's `iifname`) and peer (in the sandbox's). */
  hostEnd: string;
  peer: string;
}

function ipOf(n: number): string {
  return [n >>> 24, (n >>> 16) & 255, (n >>> 8) & 255, n & 255].join(".");
}

/**
 * A descriptor of its own on the holder's network namespace, reopened from the one the emulator holds since the
 * holder was ready (netns-entry.ts: checked against the inode the holder reported), never looked up by pid again.
 */
export async function openNamespace(netns: NetnsHandle, stillHolder: () => boolean): Promise<FileHandle> {
  if (!netns.isOpen || !stillHolder()) {
    throw new DirectLinkError("the sandbox stopped before its direct link was made");
  }
  return open(`/proc/self/fd/${netns.fd}`, "r");
}

/** Runs a host tool with the namespace's descriptor as its fd 3 and `input` on stdin; rejects with its stderr. */
function withNamespace(ns: FileHandle, tool: string, args: string[], input?: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawnHost(tool, args, { stdio: [input === undefined ? "ignore" : "pipe", "ignore", "pipe", ns.fd] });
    let stderr = "";
    child.stderr!.on("data", (chunk) => {
      stderr += chunk;
    });
    const timer = setTimeout(() => child.kill("SIGKILL"), STEP_TIMEOUT_MS);
    child.once("error", (error) => {
      clearTimeout(timer);
      reject(new DirectLinkError(`${tool} could not start: ${error.message}`, { cause: error }));
    });
    child.once("close", (code, signal) => {
      clearTimeout(timer);
      if (code === 0) resolve();
      else reject(new DirectLinkError(`${tool} ${args[0]} failed (${code ?? signal}): ${stderr.trim()}`));
    });
    // A tool that fails before reading its input closes the pipe: its exit status tells why, not EPIPE.
    child.stdin?.on("error", () => undefined);
    child.stdin?.end(input);
  });
}

/** `ip -batch -` inside the sandbox's network namespace. */
export function inSandboxNet(ns: FileHandle, commands: string[]): Promise<void> {
  return withNamespace(ns, "nsenter", [`--net=${NS_FD}`, hostTool("ip"), "-batch", "-"], `${commands.join("\n")}\n`);
}

/** Interface names are at most 15 characters and unique per emulator process. */
export function linkNames(): { hostEnd: string; peer: string } {
  const id = `v${process.pid.toString(36)}x${(next++).toString(36)}`;
  return { hostEnd: `${id}h`, peer: `${id}s` };
}

/**
 * Makes the pair (the host end filtered already, by the caller), brings both ends up and routes `addresses`
 * through it; the sandbox-side address it uses is returned. No IPv6 on either end: the automatic link-local
 * addresses would be a path to every host service on `::` (the filter drops IPv6 from the link as well).
 */
export async function makeLink({ ns, hostEnd, peer }: LinkEnds, addresses: Iterable<string>): Promise<string> {
  await withNamespace(ns, "ip", ["link", "add", hostEnd, "type", "veth", "peer", "name", peer, "netns", NS_FD]);
  const ifindex = Number(await readFile(`/sys/class/net/${hostEnd}/ifindex`, "utf8"));
  const sandboxIp = ipOf(POOL_BASE + 1 + (ifindex % (POOL_SIZE - 2)));
  await writeFile(`/proc/sys/net/ipv6/conf/${hostEnd}/disable_ipv6`, "1").catch(ignoreMissingIpv6);
  await runHost("ip", ["-batch", "-"], {
    input: `link set ${hostEnd} up\nroute replace ${sandboxIp}/32 dev ${hostEnd}\n`,
  });
  // The sandbox's /proc/sys/net is the entering process's namespace's: sh writes it there, then becomes `ip`.
  const script = `[ ! -e /proc/sys/net/ipv6/conf/$1 ] || echo 1 > /proc/sys/net/ipv6/conf/$1/disable_ipv6; exec "$2" -batch -`;
  await withNamespace(
    ns,
    "nsenter",
    [`--net=${NS_FD}`, hostTool("sh"), "-c", script, "sh", peer, hostTool("ip")],
    [
      `addr add ${sandboxIp}/32 dev ${peer}`,
      `link set ${peer} up`,
      ...routeCommands(peer, sandboxIp, addresses, []),
      "",
    ].join("\n"),
  );
  return sandboxIp;
}

/** The sandbox-side route changes: `remove`d addresses first. */
export function routeCommands(peer: string, sandboxIp: string, add: Iterable<string>, remove: Iterable<string>) {
  return [
    ...[...remove].map((address) => `route del ${address}/32 dev ${peer}`),
    ...[...add].map((address) => `route replace ${address}/32 dev ${peer} src ${sandboxIp}`),
  ];
}

/** Deletes the pair from the host's side (both ends go); a pair already gone is no error. */
export async function deleteLink(hostEnd: string): Promise<void> {
  try {
    await runHost("ip", ["link", "del", hostEnd]);
  } catch (error) {
    if (!/Cannot find device/.test(String((error as { stderr?: string }).stderr))) {
      throw new DirectLinkError(`could not remove the direct link ${hostEnd}`, { cause: error });
    }
  }
}

/** A kernel without IPv6 has no link-local addresses to disable. */
function ignoreMissingIpv6(error: NodeJS.ErrnoException): void {
  if (error.code !== "ENOENT") throw error;
}
