// Ending everything a spawned child started, not just the child. A child is spawned detached (its own session
// and process group) with an environment tag; what belongs to it is the child, its descendants (by parent
// PID, remembered across scans so a reparented orphan stays known), every member of their process groups, and
// every process carrying its tag. That last rule catches what openclaw does: `plugins install` runs npm
// detached, in a group of its own, so killing the child's group alone leaves npm running.
// Only processes found this way are signalled; never anything by name.

import { randomBytes } from "node:crypto";
import { hasEnvironmentTag, listProcesses, type ProcessEntry } from "./process-table.js";
import { sleep } from "./wait.js";

/** Environment variable holding a spawn's tag (inherited by everything it starts, unless cleared). */
export const SPAWN_TAG_VARIABLE = "OPENCLAW_TEST_SPAWN";

export class ProcessTree {
  /** `NAME=value` as it appears in /proc/<pid>/environ. */
  readonly tag = `${SPAWN_TAG_VARIABLE}=${randomBytes(12).toString("hex")}`;
  /** PID → start time of every process seen belonging to this tree. */
  readonly #known = new Map<number, number>();
  readonly #groups = new Set<number>();
  #leader: number | undefined;

  /** The environment entry to give the child: `{ OPENCLAW_TEST_SPAWN: <random> }`. */
  get environment(): Record<string, string> {
    const [name = SPAWN_TAG_VARIABLE, value = ""] = this.tag.split("=");
    return { [name]: value };
  }

  /** Records the spawned child, which leads its own process group (spawned detached). */
  adopt(pid: number): void {
    this.#leader = pid;
    this.#groups.add(pid);
  }

  /** Running processes that belong to this tree now. Throws when /proc cannot be read. */
  members(): ProcessEntry[] {
    const all = listProcesses();
    const ownGroup = all.find((entry) => entry.pid === process.pid)?.pgid ?? -1;
    const table = all.filter((entry) => entry.pid !== process.pid);
    const tagged = new Set(table.filter((e) => hasEnvironmentTag(e.pid, this.tag)).map((e) => e.pid));
    const found = new Map<number, ProcessEntry>();
    for (let changed = true; changed; ) {
      changed = false;
      for (const entry of table) {
        if (found.has(entry.pid)) continue;
        const belongs =
          entry.pid === this.#leader ||
          this.#known.get(entry.pid) === entry.start ||
          this.#groups.has(entry.pgid) ||
          found.has(entry.ppid) ||
          tagged.has(entry.pid);
        if (!belongs) continue;
        found.set(entry.pid, entry);
        this.#known.set(entry.pid, entry.start);
        // Never our own group (or init's): a child that somehow joined it is signalled by PID only.
        if (entry.pgid > 1 && entry.pgid !== ownGroup) this.#groups.add(entry.pgid);
        changed = true;
      }
    }
    return [...found.values()];
  }

  /** Sends `signal` to every group of the tree and to each member. Returns the members it found. */
  signal(signal: NodeJS.Signals): ProcessEntry[] {
    const members = this.members();
    if (members.length === 0) return members;
    for (const group of this.#groups) trySignal(-group, signal);
    for (const member of members) trySignal(member.pid, signal);
    return members;
  }

  /**
   * Ends the whole tree: SIGTERM, SIGKILL to whatever is left after graceMs, then waits (bounded) until
   * nothing of it runs. Throws, naming the PIDs, if something survives SIGKILL.
   */
  async end(graceMs: number): Promise<void> {
    if (this.signal("SIGTERM").length === 0) return;
    if (await this.#settled(graceMs)) return;
    this.signal("SIGKILL");
    if (await this.#settled(5_000)) return;
    const left = this.members().map((m) => m.pid);
    throw new Error(`processes started by the test survived SIGKILL: ${left.join(", ")}`);
  }

  /** SIGKILL to the whole tree without waiting: for exit paths that cannot await. */
  endNow(): void {
    this.signal("SIGKILL");
  }

  async #settled(withinMs: number): Promise<boolean> {
    const deadline = performance.now() + withinMs;
    for (;;) {
      if (this.members().length === 0) return true;
      if (performance.now() > deadline) return false;
      await sleep(50);
    }
  }
}

function trySignal(target: number, signal: NodeJS.Signals): void {
  try {
    process.kill(target, signal);
  } catch {
    // Already gone (ESRCH): nothing to end.
  }
}
