// The worker cap's bookkeeping: which leases count against `maxWorkers` (allocated ones, and reservations of
// placements still being allocated), and the admission rule, run under one lock so concurrent placements are
// decided one at a time: a placement under the cap reserves a slot; at the cap, the least recently active idle
// worker is reclaimed through the gateway (started by the placement that found the cap full, which is refused
// with a retryable error saying so: core cannot reclaim while that placement is in flight, see #makeRoom), and
// when nothing is idle the placement is refused at once. A reservation is released when its
// provision fails, and a lease stops counting once its destroy resolved (release proven).
import type { ProviderLogger } from "../../infra/index.js";
import { WorkerCapReachedError, WorkerCapReclaimError, WorkerCapReclaimingError } from "./errors.js";
import type { CapWorker, Reclaimer } from "./types.js";

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
  /** A reclaim started by a refused placement, still under way (what it reclaims among, for the message). */
  #reclaiming: { among: string; done: Promise<void> } | undefined;

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

  /**
   * At the cap, under the lock. OpenClaw 2026.9.2 runs `sessions.reclaim` as an exclusive placement operation: it
   * waits until no dispatch is in flight, and the placement asking for a slot is one, so a reclaim awaited here
   * would never finish. The reclaim of the least recently active idle worker is therefore started here and runs
   * once this placement has failed (retryable, saying so); the placement that retries finds the slot free. While a
   * reclaim is under way every placement at the cap is refused the same way, so no second one is started.
   */
  async #makeRoom(maxWorkers: number): Promise<void> {
    if (this.#counted.size < maxWorkers) return;
    if (this.#reclaiming) throw new WorkerCapReclaimingError(maxWorkers, this.#reclaiming.among);
    // A reserved lease is still being placed: never a candidate (it is busy by definition).
    const live = [...this.#counted.values()].filter((c) => c.phase === "live").map((c) => c.leaseId);
    const reclaimer = this.reclaimer();
    if (live.length === 0) throw new WorkerCapReachedError(maxWorkers, this.#counted.size, this.#counted.size);
    if (!reclaimer) throw new WorkerCapReclaimError(maxWorkers, "the plugin's gateway routes are not registered");
    let workers: CapWorker[];
    try {
      workers = await reclaimer.workers();
    } catch (error) {
      throw new WorkerCapReclaimError(maxWorkers, (error as Error).message);
    }
    const idle = workers.filter((w) => live.includes(w.leaseId) && !w.busy).map((w) => w.leaseId);
    if (idle.length === 0) {
      const busy = this.#counted.size - live.length + workers.filter((w) => live.includes(w.leaseId) && w.busy).length;
      throw new WorkerCapReachedError(maxWorkers, this.#counted.size, busy);
    }
    const among = `${idle.length} idle of ${live.length}`;
    const done = reclaimer
      .reclaimOne(idle)
      .then((outcome) => {
        if (outcome.status === "reclaimed") {
          this.#counted.delete(outcome.worker.leaseId);
          this.logger.info?.(
            `vercel-sandbox: maxWorkers ${maxWorkers} reached; reclaimed idle worker ${outcome.worker.leaseId} (sessions: ${outcome.worker.sessions.join(", ") || "none"})`,
          );
        } else {
          this.logger.warn(
            `vercel-sandbox: maxWorkers ${maxWorkers}: no idle worker could be reclaimed (${outcome.busy} busy)`,
          );
        }
      })
      .catch((error: unknown) => {
        this.logger.warn(
          `vercel-sandbox: maxWorkers ${maxWorkers}: reclaiming an idle worker failed: ${(error as Error).message}`,
        );
      })
      .finally(() => {
        if (this.#reclaiming?.done === done) this.#reclaiming = undefined;
      });
    this.#reclaiming = { among, done };
    throw new WorkerCapReclaimingError(maxWorkers, among);
  }

  /** Resolves once no reclaim is under way (tests, and a caller that wants to retry right after it). */
  async reclaimSettled(): Promise<void> {
    await this.#reclaiming?.done;
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
