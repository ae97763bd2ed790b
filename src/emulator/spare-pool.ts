// The spare pool: outer processes made ahead of the next boots (lifecycle.ts takes one per boot), each in cgroups of
// its own, with its holder forked and waiting, so neither the cgroup migration nor a fork is on a boot's path.
import type { SandboxCgroups } from "./cgroups.js";
import type { HolderFactory, PreparedHolder } from "./holder-zygote.js";
import { stopHolder } from "./isolation.js";
import { newId } from "./registry.js";

/** Outer processes kept made ahead of the next boots (`SparePool.spares`). */
const SPARES = 2;

export class SparePool {
  constructor(
    private readonly cgroups: SandboxCgroups,
    private readonly holders: HolderFactory,
  ) {}

  /**
   * Outer processes made ahead of the next boots, each in groups of its own (`key`), with its holder forked and
   * waiting: a boot takes the oldest, so neither the cgroup migration (an RCU grace period, several ms) nor a fork
   * is on a create's or a resume's path. Refilled to `SPARES` by a boot that found none, else when a session stops
   * (made after a boot, they would compete with that sandbox's first command, which nearly always follows it). Two,
   * so a resume right after a stop takes one made earlier rather than wait for the one the stop began.
   */
  private readonly spares: { key: string; prepared: PreparedHolder }[] = [];
  private closing = false;

  /** Makes the next boots' outer processes, up to `SPARES` (none while the emulator is closing). */
  refill(): void {
    while (!this.closing && this.spares.length < SPARES) {
      const key = newId("spare");
      let procs: string[];
      try {
        procs = this.cgroups.create(key, 1);
      } catch {
        return; // The next boot makes its groups itself, and says why if it cannot.
      }
      this.spares.push({ key, prepared: this.holders.prepare(procs) });
    }
  }

  /** The oldest spare outer process still there for a boot of `sessionId`, with its limits; else none. */
  take(sessionId: string, vcpus: number): { prepared?: PreparedHolder; limits: string[] } {
    for (let spare = this.spares.shift(); spare; spare = this.spares.shift()) {
      if (spare.prepared.start.isGone()) {
        void this.discard(spare);
        continue;
      }
      try {
        return { prepared: spare.prepared, limits: this.cgroups.adopt(spare.key, sessionId, vcpus) };
      } catch {
        void this.discard(spare);
        break;
      }
    }
    return { limits: this.cgroups.create(sessionId, vcpus) };
  }

  private async discard(spare: { key: string; prepared: PreparedHolder }): Promise<void> {
    await stopHolder({ pid: 0, start: spare.prepared.start });
    await this.cgroups.remove(spare.key);
  }

  /** The emulator's close: no spare is made from now on, and those made go. */
  async close(): Promise<void> {
    this.closing = true;
    await Promise.all(this.spares.splice(0).map((spare) => this.discard(spare)));
  }
}
