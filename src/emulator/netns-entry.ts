// Entering a sandbox's network namespace from the host by a descriptor, never by a pid. `nsenter -t <pid>` names
// whatever process holds that pid when it runs: once the holder is gone its pid may be another's (another
// sandbox's, the host's), and a host tool would then configure or listen in that one's network. The emulator opens
// the holder's /proc/<pid>/ns/net once, when the holder reports ready, and checks it is the namespace the holder
// itself reported (its inode: the pid cannot have been reused in between unnoticed); tools are then given that
// descriptor in their stdio and enter it as `/proc/self/fd/<n>` (`nsenter --net=…`, `ip link … netns …`).
import { closeSync, fstatSync, openSync } from "node:fs";
import { hostTool, spawnHost } from "./host-spawn.js";

/** Thrown when the holder's pid no longer names the network namespace the holder reported. */
export class NamespaceMismatchError extends Error {
  constructor(pid: number) {
    super(`process ${pid} is no longer the sandbox's holder (its network namespace is another's)`);
    this.name = "NamespaceMismatchError";
  }
}

/** A sandbox's network namespace, held open by the emulator until the session stops. */
export class NetnsHandle {
  private open = true;

  private constructor(readonly fd: number) {}

  /** Opens /proc/<pid>/ns/net and checks it is the namespace whose inode the holder reported. */
  static of(pid: number, inode: number): NetnsHandle {
    const fd = openSync(`/proc/${pid}/ns/net`, "r");
    if (fstatSync(fd).ino !== inode) {
      closeSync(fd);
      throw new NamespaceMismatchError(pid);
    }
    return new NetnsHandle(fd);
  }

  /** Whether the descriptor is still open (a closed one's number may be another file's by now). */
  get isOpen(): boolean {
    return this.open;
  }

  /** Closes it once (later calls do nothing). */
  close(): void {
    if (!this.open) return;
    this.open = false;
    closeSync(this.fd);
  }
}

/** Thrown when a namespace is entered after its session stopped. */
export class NamespaceClosedError extends Error {
  constructor() {
    super("the sandbox's network namespace is closed (its session stopped)");
    this.name = "NamespaceClosedError";
  }
}

/** The child's descriptor the namespace is passed as, unless a caller needs another (3 is often `ipc`). */
export const NETNS_CHILD_FD = 3;

/**
 * How a host tool enters the namespace: `args` go first on `nsenter`'s command line (or `path` after `ip link …
 * netns`), and `fd` must be the child's descriptor `childFd` (`stdio[childFd] = fd`).
 */
export function netnsArgs(
  netns: NetnsHandle,
  childFd = NETNS_CHILD_FD,
): { args: string[]; path: string; fd: number; childFd: number } {
  if (!netns.isOpen) throw new NamespaceClosedError();
  const path = `/proc/self/fd/${childFd}`;
  return { args: [`--net=${path}`], path, fd: netns.fd, childFd };
}

/** Runs a system tool (fixed env, absolute path) inside the namespace to its end; rejects with its stderr. */
export function runInNetns(netns: NetnsHandle, tool: string, args: readonly string[]): Promise<{ stdout: string }> {
  const entry = netnsArgs(netns);
  return new Promise((resolve, reject) => {
    const child = spawnHost("nsenter", [...entry.args, "--", hostTool(tool), ...args], {
      stdio: ["ignore", "pipe", "pipe", entry.fd],
    });
    let stdout = "";
    let stderr = "";
    child.stdout!.on("data", (d) => {
      stdout += d;
    });
    child.stderr!.on("data", (d) => {
      stderr += d;
    });
    child.once("error", reject);
    child.once("close", (code) =>
      code === 0
        ? resolve({ stdout })
        : reject(new Error(`${tool} ${args.join(" ")} failed (${code}): ${stderr.trim()}`)),
    );
  });
}
