// The pure half of per-sandbox resource limits (cgroups.ts is the I/O half): which cgroup layout this
// machine offers the emulator and what a sandbox of `vcpus` vCPUs is limited to (the holder's outer process
// joins its sandbox's groups itself, holder-script.ts, and every program of the sandbox is born there). The layout is read
// from the texts of /proc/self/cgroup, /proc/self/mountinfo and (v2) the emulator's own
// cgroup.subtree_control, so every machine shape (v2-only, hybrid, no cgroups) is a fixture in a test.
import path from "node:path";

/** Controllers a sandbox is limited with: memory (and swap), process count, CPU time. */
export const CONTROLLERS = ["memory", "pids", "cpu"] as const;
export type Controller = (typeof CONTROLLERS)[number];

/** Vercel gives each vCPU 2 GB of memory (payloads.ts echoes the same figure in MB). */
export const MEMORY_BYTES_PER_VCPU = 2048 * 1024 * 1024;

// Vercel documents no process limit (a VM is bounded by its own kernel); here every sandbox shares the
// host's PID space (pid_max is 32768 on some hosts), so a fork bomb must stop far below it while the
// gateway can still fork. 4096 tasks (threads count too) is well above a parallel build's needs.
export const SANDBOX_PIDS_MAX = 4096;

/** The CFS period the CPU quota is expressed in (the kernel's default, 100 ms). */
export const CPU_PERIOD_US = 100_000;

/** A sandbox process's OOM score bias: under host-wide memory pressure the kernel picks a sandbox's process before the gateway. */
export const SANDBOX_OOM_SCORE_ADJ = 500;

export type CgroupLayout =
  /** The emulator's own cgroup in the unified hierarchy, with the controllers delegated to its children. */
  | { kind: "v2"; dir: string }
  /** The emulator's own cgroup in each v1 hierarchy. */
  | { kind: "v1"; dirs: Record<Controller, string> }
  | { kind: "none"; reason: string };

/** Reads a file's text, or undefined when it is missing or unreadable. */
export type ReadText = (file: string) => string | undefined;

interface Membership {
  controllers: string[];
  path: string;
}

/** `/proc/<pid>/cgroup`: one `id:controllers:path` line per hierarchy (v2's is `0::path`). */
export function parseProcCgroup(text: string): Membership[] {
  return text
    .split("\n")
    .filter(Boolean)
    .map((line) => {
      const first = line.indexOf(":");
      const second = line.indexOf(":", first + 1);
      const names = line.slice(first + 1, second);
      return { controllers: names ? names.split(",") : [], path: line.slice(second + 1) };
    });
}

interface CgroupMount {
  root: string;
  mountPoint: string;
  fsType: string;
  writable: boolean;
  superOptions: string[];
}

// mountinfo escapes space, tab, newline and backslash as octal.
const unescapeOctal = (field: string) =>
  field.replace(/\\([0-7]{3})/g, (_m, oct: string) => String.fromCharCode(Number.parseInt(oct, 8)));

/** The cgroup and cgroup2 mounts of `/proc/<pid>/mountinfo`. */
export function parseCgroupMounts(text: string): CgroupMount[] {
  const mounts: CgroupMount[] = [];
  for (const line of text.split("\n")) {
    const [head, tail] = line.split(" - ");
    if (!head || !tail) continue;
    const fields = head.split(" ");
    const [fsType, , superOptions = ""] = tail.split(" ");
    if (fsType !== "cgroup" && fsType !== "cgroup2") continue;
    mounts.push({
      root: unescapeOctal(fields[3] ?? "/"),
      mountPoint: unescapeOctal(fields[4] ?? ""),
      fsType,
      writable: (fields[5] ?? "").split(",").includes("rw"),
      superOptions: superOptions.split(","),
    });
  }
  return mounts;
}

/** Where a cgroup path shows in a mount of its hierarchy, if that mount reaches it. */
function dirIn(mount: CgroupMount, cgroupPath: string): string | undefined {
  const rel = path.posix.relative(mount.root, cgroupPath);
  if (rel.startsWith("..")) return undefined;
  return path.posix.join(mount.mountPoint, rel);
}

function v2Layout(memberships: Membership[], mounts: CgroupMount[], read: ReadText): CgroupLayout {
  const own = memberships.find((m) => m.controllers.length === 0 && !m.path.startsWith("/..") && m.path);
  const unified = mounts.filter((m) => m.fsType === "cgroup2" && m.writable);
  if (!own || unified.length === 0) return { kind: "none", reason: "no writable cgroup v2 (unified) hierarchy" };
  const dir = unified.map((m) => dirIn(m, own.path)).find((d) => d !== undefined);
  if (!dir) return { kind: "none", reason: "the emulator's cgroup v2 group is not under a mounted unified hierarchy" };
  const delegated = (read(path.posix.join(dir, "cgroup.subtree_control")) ?? "").trim().split(/\s+/);
  const missing = CONTROLLERS.filter((c) => !delegated.includes(c));
  if (missing.length > 0) {
    return {
      kind: "none",
      reason: `cgroup v2 does not delegate ${missing.join(", ")} to children of the emulator's group ${dir} (its cgroup.subtree_control)`,
    };
  }
  return { kind: "v2", dir };
}

function v1Layout(memberships: Membership[], mounts: CgroupMount[]): CgroupLayout {
  const dirs: Partial<Record<Controller, string>> = {};
  const missing: string[] = [];
  for (const controller of CONTROLLERS) {
    const own = memberships.find((m) => m.controllers.includes(controller));
    const dir = own
      ? mounts
          .filter((m) => m.fsType === "cgroup" && m.writable && m.superOptions.includes(controller))
          .map((m) => dirIn(m, own.path))
          .find((d) => d !== undefined)
      : undefined;
    if (dir) dirs[controller] = dir;
    else missing.push(controller);
  }
  if (missing.length > 0) return { kind: "none", reason: `no writable cgroup v1 hierarchy for ${missing.join(", ")}` };
  return { kind: "v1", dirs: dirs as Record<Controller, string> };
}

/**
 * The layout to limit sandboxes with: v2 where the unified hierarchy delegates memory, pids and cpu to
 * children of the emulator's own group, else v1 where all three hierarchies are mounted writable, else
 * none, with the reasons of both.
 */
export function chooseCgroupLayout(read: ReadText): CgroupLayout {
  const memberships = parseProcCgroup(read("/proc/self/cgroup") ?? "");
  const mounts = parseCgroupMounts(read("/proc/self/mountinfo") ?? "");
  const v2 = v2Layout(memberships, mounts, read);
  if (v2.kind !== "none") return v2;
  const v1 = v1Layout(memberships, mounts);
  if (v1.kind !== "none") return v1;
  return { kind: "none", reason: `${v2.reason}; ${v1.reason}` };
}

/** A file of a sandbox's cgroup and the value it is set to, in the order they must be written. */
export interface LimitSetting {
  controller: Controller;
  file: string;
  value: string;
  /** Written only where the kernel offers the file (swap accounting may be off). */
  optional?: boolean;
}

/** What a sandbox of `vcpus` vCPUs is limited to: memory without swap, processes, CPU time. */
export function limitSettings(kind: "v1" | "v2", vcpus: number): LimitSetting[] {
  const memory = String(Math.max(1, vcpus) * MEMORY_BYTES_PER_VCPU);
  const quota = String(Math.round(Math.max(vcpus, 0.01) * CPU_PERIOD_US));
  if (kind === "v2") {
    return [
      { controller: "memory", file: "memory.max", value: memory },
      // No swap: a hog past its memory is killed, not spilled to the host's swap.
      { controller: "memory", file: "memory.swap.max", value: "0", optional: true },
      // Only the process the OOM killer picks dies (the holder and the sandbox's other processes stay).
      { controller: "memory", file: "memory.oom.group", value: "0", optional: true },
      { controller: "pids", file: "pids.max", value: String(SANDBOX_PIDS_MAX) },
      { controller: "cpu", file: "cpu.max", value: `${quota} ${CPU_PERIOD_US}` },
    ];
  }
  return [
    { controller: "memory", file: "memory.limit_in_bytes", value: memory },
    // memory+swap at the memory limit: no swap at all (must follow the memory limit, which it may not undercut).
    { controller: "memory", file: "memory.memsw.limit_in_bytes", value: memory, optional: true },
    // The kernel's OOM killer acts inside the group at its limit (0 = not disabled), so the hog dies, not the host.
    { controller: "memory", file: "memory.oom_control", value: "0", optional: true },
    { controller: "pids", file: "pids.max", value: String(SANDBOX_PIDS_MAX) },
    { controller: "cpu", file: "cpu.cfs_period_us", value: String(CPU_PERIOD_US) },
    { controller: "cpu", file: "cpu.cfs_quota_us", value: quota },
  ];
}
