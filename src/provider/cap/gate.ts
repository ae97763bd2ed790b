// The worker cap's bookkeeping: which leases count against `maxWorkers` (allocated ones, and reservations of
// placements still being allocated), and the admission rule, run under one lock so concurrent placements are
// decided one at a time: a placement under the cap reserves a slot; at the cap, the least recently active idle
// worker is reclaimed through the gateway first (still under the lock, so no other placement takes the freed
// slot), and when nothing is idle the placement is refused at once. A reservation is released when its
// provision fails, and a lease stops counting once its destroy resolved (release proven).
import type { ProviderLogger } from "../../infra/index.js";
import { WorkerCapReachedError, WorkerCapReclaimError } from "./errors.js";
import type { Reclaimer } from "./types.js";

export type Admission = "replay" | "reserved";

export interface CountedLease {
  leaseId: string;
  /** `reserved`: its provision is running; `live`: allocated and not yet destroyed. */
  phase: "reserved" | "live";
  sinceMs: number;
}

export interface CapSnapshot {
  /** The cap of the last placement that named one (profiles may differ); null when none did. */
  maxWorkers: number | null;
  counted: CountedLease[];
}

export class WorkerCap {
  #tail: Promise<unknown> = Promise.resolve();
  readonly #counted = new Map<string, CountedLease>();
  #seeded = false;
  #lastMax: number | null = null;

  constructor(
    private readonly reclaimer: () => Reclaimer | undefined,
    private readonly logger: ProviderLogger,
    private readonly now: () => number = Date.now,
  ) {}

  /**
   * Admits a placement of `leaseId` under `maxWorkers`. Resolves once the lease holds a slot; throws a
   * WorkerProviderError (nothing allocated) when the cap cannot be kept.
   */
  admit(leaseId: string, maxWorkers: number): Promise<Admission> {
    return this.#locked(async () => {
      if (this.#counted.has(leaseId)) return "replay";
      this.#lastMax = maxWorkers;
      await this.#seed();
      await this.#makeRoom(maxWorkers);
      this.#counted.set(leaseId, { leaseId, phase: "reserved", sinceMs: this.now() });
      return "reserved";
    });
  }

  /** A placement no cap holds back (its profile sets none): counted from now, without waiting for the lock. */
  note(leaseId: string): void {
    if (!this.#counted.has(leaseId)) this.#counted.set(leaseId, { leaseId, phase: "reserved", sinceMs: this.now() });
  }

  /** The provision settled: an allocated lease keeps its slot, a failed one gives it back. */
  settle(leaseId: string, allocated: boolean): void {
    const entry = this.#counted.get(leaseId);
    if (!entry) return;
    if (allocated) entry.phase = "live";
    else if (entry.phase === "reserved") this.#counted.delete(leaseId);
  }

  /** The lease was destroyed (release proven): it no longer counts. Never waits for the lock (a reclaim in it waits for this). */
  forget(leaseId: string): void {
    this.#counted.delete(leaseId);
  }

  snapshot(): CapSnapshot {
    return {
      maxWorkers: this.#lastMax,
      counted: [...this.#counted.values()].map((c) => ({ ...c })).sort((a, b) => a.sinceMs - b.sinceMs),
    };
  }

  /** Reclaims idle workers until a slot is free, or refuses. Runs under the lock. */
  async #makeRoom(maxWorkers: number): Promise<void> {
    while (this.#counted.size >= maxWorkers) {
      // A reserved lease is still being placed: never a candidate (it is busy by definition).
      const live = [...this.#counted.values()].filter((c) => c.phase === "live").map((c) => c.leaseId);
      const reclaimer = this.reclaimer();
      if (live.length === 0) throw new WorkerCapReachedError(maxWorkers, this.#counted.size, this.#counted.size);
      if (!reclaimer) throw new WorkerCapReclaimError(maxWorkers, "the plugin's gateway routes are not registered");
      let outcome: Awaited<ReturnType<Reclaimer["reclaimOne"]>>;
      try {
        outcome = await reclaimer.reclaimOne(live);
      } catch (error) {
        throw new WorkerCapReclaimError(maxWorkers, (error as Error).message);
      }
      if (outcome.status === "busy") {
        throw new WorkerCapReachedError(
          maxWorkers,
          this.#counted.size,
          this.#counted.size - live.length + outcome.busy,
        );
      }
      this.logger.info?.(
        `vercel-sandbox: maxWorkers ${maxWorkers} reached; reclaimed idle worker ${outcome.worker.leaseId} (sessions: ${outcome.worker.sessions.join(", ") || "none"})`,
      );
      this.#counted.delete(outcome.worker.leaseId);
    }
  }

  /** After a gateway restart, workers placed by the earlier process count too: learned once, from the gateway. */
  async #seed(): Promise<void> {
    if (this.#seeded) return;
    const reclaimer = this.reclaimer();
    if (!reclaimer) return;
    try {
      for (const worker of await reclaimer.workers()) {
        if (!this.#counted.has(worker.leaseId)) {
          this.#counted.set(worker.leaseId, { leaseId: worker.leaseId, phase: "live", sinceMs: this.now() });
        }
      }
      this.#seeded = true;
    } catch (error) {
      this.logger.warn(
        `vercel-sandbox: could not list workers for maxWorkers (${(error as Error).message}); retried at the next placement`,
      );
    }
  }

  #locked<T>(work: () => Promise<T>): Promise<T> {
    const result = this.#tail.then(work, work);
    this.#tail = result.catch(() => undefined);
    return result;
  }
}
