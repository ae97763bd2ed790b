// Per-sandbox resource limits (issue 19: one sandbox must not starve the gateway hosting the emulator).
// Each session gets a cgroup of its own under one parent per emulator instance, itself a child of the
// emulator's own cgroup, limited from the sandbox's `vcpus` (cgroup-layout.ts says to what): the holder's
// outer process joins it before it builds the sandbox, and the sandbox's programs are its children
// (serve-script.ts), born in it, interactive shells included (interactive.ts). So the kernel enforces the limits inside that sandbox only.
// Where the machine offers no usable cgroups the emulator warns once, at start, and runs without limits.
// The groups are removed when their session stops; the parent stays for the next session (making it and its
// cleaner again per boot cost a process start on the event loop) and goes when the emulator closes; a cleaner
// (cgroup-cleaner.ts) removes them if the emulator is killed first.
import { randomBytes } from "node:crypto";
import { existsSync, mkdirSync, readdirSync, readFileSync, rmdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { CgroupCleaner } from "./cgroup-cleaner.js";
import {
  type CgroupLayout,
  CONTROLLERS,
  type Controller,
  chooseCgroupLayout,
  type LimitSetting,
  limitSettings,
  type ReadText,
} from "./cgroup-layout.js";

/** The code of the one warning an emulator without limits emits (process.emitWarning). */
export const NO_LIMITS_WARNING = "VERCEL_SANDBOX_EMULATOR_NO_LIMITS";

const defaultWarn = (message: string) => process.emitWarning(message, { code: NO_LIMITS_WARNING });
const PARENT_PREFIX = "vercel-sandbox-emulator-";
/** How long a stopped session's group may stay busy (exiting processes) before its removal gives up. */
const REMOVE_TIMEOUT_MS = 5_000;

const readText = (file: string) => {
  try {
    return readFileSync(file, "utf8");
  } catch {
    return undefined;
  }
};

const newParentName = () => `${PARENT_PREFIX}${process.pid}-${randomBytes(4).toString("hex")}`;

function errorCode(error: unknown): string | undefined {
  return (error as NodeJS.ErrnoException).code;
}

/** rmdir that treats an already removed group as removed; false while the group is busy. */
function removeDir(dir: string): boolean {
  try {
    rmdirSync(dir);
    return true;
  } catch (error) {
    return errorCode(error) === "ENOENT";
  }
}

export class SandboxCgroups {
  private readonly layout: CgroupLayout;
  /**
   * This emulator's parent group: pid for a reader, random for two emulators in one process, and new
   * each time it is made again, so an earlier parent's cleaner never touches the current one's groups.
   */
  private parentName = newParentName();
  /** The groups of each live session, by session id. */
  private readonly live = new Map<string, string[]>();
  private cleaner?: CgroupCleaner;

  /** `read` and `warn` default to the real /proc and process.emitWarning (tests give a machine's texts). */
  constructor({ read = readText, warn = defaultWarn }: { read?: ReadText; warn?: (message: string) => void } = {}) {
    let layout = chooseCgroupLayout(read);
    if (layout.kind !== "none") {
      this.layout = layout;
      sweepStale(this.ownDirs());
      try {
        // Proves the hierarchy writable now, so the warning comes at start, not at the first boot.
        this.makeParents();
        this.removeParents();
      } catch (error) {
        layout = {
          kind: "none",
          reason: `cannot create a group under ${this.ownDirs().join(", ")}: ${(error as Error).message}`,
        };
      }
    }
    this.layout = layout;
    if (layout.kind === "none") {
      warn(
        `Sandboxes run WITHOUT CPU, memory or process limits (${layout.reason}): one sandbox can exhaust this machine. Run the emulator where cgroup v2 delegates memory, pids and cpu to its group, or cgroup v1 memory, pids and cpu are writable.`,
      );
    }
  }

  /** Whether sandboxes are limited on this machine. */
  get enforced(): boolean {
    return this.layout.kind !== "none";
  }

  /** The emulator's own group in each hierarchy the limits use. */
  private ownDirs(): string[] {
    const { layout } = this;
    if (layout.kind === "v2") return [layout.dir];
    if (layout.kind === "v1") return CONTROLLERS.map((c) => layout.dirs[c]);
    return [];
  }

  private parentDirs(): string[] {
    return this.ownDirs().map((d) => path.join(d, this.parentName));
  }

  private makeParents(): void {
    this.parentName = newParentName();
    // Not `recursive`: the own groups exist, and Node's recursive mkdir never returns under /proc.
    for (const dir of this.parentDirs()) {
      try {
        mkdirSync(dir);
      } catch (error) {
        if (errorCode(error) !== "EEXIST") throw error;
      }
    }
    if (this.layout.kind === "v2") {
      writeFileSync(
        path.join(this.parentDirs()[0]!, "cgroup.subtree_control"),
        CONTROLLERS.map((c) => `+${c}`).join(" "),
      );
    }
  }

  private removeParents(): void {
    for (const dir of this.parentDirs()) removeDir(dir);
  }

  /** The parents' cleaner, started with the first group in them. */
  private watch(): void {
    this.cleaner ??= new CgroupCleaner(this.parentDirs());
  }

  /** The session's group in each hierarchy, keyed by the controller it limits. */
  private sessionDirs(id: string): Array<[Controller | "all", string]> {
    const { layout } = this;
    if (layout.kind === "v2") return [["all", path.join(layout.dir, this.parentName, id)]];
    if (layout.kind === "v1") return CONTROLLERS.map((c) => [c, path.join(layout.dirs[c], this.parentName, id)]);
    return [];
  }

  /**
   * Creates the session's limited group; returns the cgroup.procs files a process joins it by (none where
   * nothing is enforced).
   */
  create(id: string, vcpus: number): string[] {
    const { layout } = this;
    if (layout.kind === "none") return [];
    // The parent is made with the first session (and again after a close took it).
    if (!this.cleaner) this.makeParents();
    this.watch();
    const dirs = this.sessionDirs(id);
    this.live.set(
      id,
      dirs.map(([, dir]) => dir),
    );
    // On failure the groups made so far go at once; the caller's remove(id) then forgets the session.
    try {
      for (const [, dir] of dirs) mkdirSync(dir);
      this.limit(dirs, limitSettings(layout.kind, vcpus));
    } catch (error) {
      for (const [, dir] of dirs) removeDir(dir);
      throw error;
    }
    return dirs.map(([, dir]) => path.join(dir, "cgroup.procs"));
  }

  private limit(dirs: Array<[Controller | "all", string]>, settings: LimitSetting[]): void {
    for (const setting of settings) {
      const dir = dirs.find(([c]) => c === "all" || c === setting.controller)![1];
      const file = path.join(dir, setting.file);
      if (setting.optional && !existsSync(file)) continue;
      writeFileSync(file, setting.value);
    }
  }

  /**
   * Gives the groups made as `from` with `create(from, 1)` (for an outer process made ahead of a boot) to session
   * `id`, limited from its `vcpus`; returns their cgroup.procs files as `create` does. If a limit cannot be written
   * the groups stay `from`'s (the caller's remove(from) takes them) and the error is thrown.
   */
  adopt(from: string, id: string, vcpus: number): string[] {
    const dirs = this.live.get(from);
    if (!dirs || this.layout.kind === "none") return [];
    const keyed = this.sessionDirs(from);
    // Limits only rise from one vCPU's: cgroup v1 takes memory+swap's limit first then (never below memory's).
    const settings = limitSettings(this.layout.kind, vcpus);
    const memory = settings.findIndex((x) => x.file === "memory.limit_in_bytes");
    const swap = settings.findIndex((x) => x.file === "memory.memsw.limit_in_bytes");
    if (memory >= 0 && swap >= 0) [settings[memory], settings[swap]] = [settings[swap]!, settings[memory]!];
    this.limit(keyed, settings);
    this.live.delete(from);
    this.live.set(id, dirs);
    return keyed.map(([, dir]) => path.join(dir, "cgroup.procs"));
  }

  /** Removes the session's group once its processes are gone (ends stragglers); the parent goes with the last. */
  async remove(id: string): Promise<void> {
    const dirs = this.live.get(id);
    if (!dirs) return;
    const deadline = Date.now() + REMOVE_TIMEOUT_MS;
    for (let attempt = 0; ; attempt++) {
      const left = dirs.filter((dir) => !removeDir(dir));
      if (left.length === 0) break;
      if (Date.now() > deadline) {
        process.emitWarning(`Could not remove the stopped sandbox's cgroup ${left.join(", ")}: it is still busy`);
        break;
      }
      // The holder's death ends the sandbox's PID namespace; give exiting processes a moment, then end
      // anything that joined the group and lingers (e.g. a wrapper that never entered).
      if (attempt >= 5) for (const dir of left) killMembers(dir);
      await new Promise((r) => setTimeout(r, 50));
    }
    this.live.delete(id);
  }

  /** Removes the parent (the emulator's close, after its sessions stopped); a later session makes it again. */
  async close(): Promise<void> {
    await Promise.all([...this.live.keys()].map((id) => this.remove(id)));
    if (!this.cleaner) return;
    this.removeParents();
    const cleaner = this.cleaner;
    this.cleaner = undefined;
    await cleaner?.finish();
  }
}

function killMembers(dir: string): void {
  if (existsSync(path.join(dir, "cgroup.kill"))) {
    try {
      writeFileSync(path.join(dir, "cgroup.kill"), "1");
      return;
    } catch {
      // Fall back to the members one by one.
    }
  }
  for (const pid of (readText(path.join(dir, "cgroup.procs")) ?? "").split("\n").filter(Boolean)) {
    try {
      process.kill(Number(pid), "SIGKILL");
    } catch {
      // Already gone.
    }
  }
}

/** Removes parents left by emulators that died without stopping their sandboxes (their processes died with them). */
function sweepStale(ownDirs: string[]): void {
  for (const own of ownDirs) {
    let entries: string[];
    try {
      entries = readdirSync(own);
    } catch {
      continue;
    }
    for (const name of entries) {
      const pid = new RegExp(`^${PARENT_PREFIX}(\\d+)-[0-9a-f]+$`).exec(name)?.[1];
      if (!pid || existsSync(`/proc/${pid}`)) continue;
      const parent = path.join(own, name);
      try {
        for (const child of readdirSync(parent, { withFileTypes: true })) {
          if (child.isDirectory()) removeDir(path.join(parent, child.name));
        }
      } catch {
        // Gone meanwhile.
      }
      removeDir(parent);
    }
  }
}
