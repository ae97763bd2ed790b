// The worker cap's bookkeeping: which leases count against `maxWorkers` (allocated ones, and reservations of
// placements still being allocated), and the admission rule, run under one lock so concurrent placements are
// decided one at a time: a placement under the cap reserves a slot; at the cap, the least recently active idle
// worker is reclaimed through the gateway (started by the placement that found the cap full, which is refused
// with a retryable error saying so: core cannot reclaim while that placement is in flight, see #makeRoom), and
// when nothing is idle the placement is refused at once. A reservation is released when its
// provision fails, and a lease stops counting once its destroy resolved (release proven).
// A turn about to be placed makes room ahead (makeRoomAhead, from the plugin's `before_dispatch` hook, which core
// awaits before the turn's placement and outside any placement in flight): it reclaims an idle worker and waits
// for it, or waits for one to become idle, up to a bound; the placement that follows finds the slot free.
import type { ProviderLogger } from "../../infra/index.js";
import { WorkerCapReachedError, WorkerCapReclaimError, WorkerCapReclaimingError } from "./errors.js";
import type { CapWorker, Reclaimer } from "./types.js";

export type Admission = "replay" | "reserved";

/** What makeRoomAhead did: found room, reclaimed a worker, waited for room, or gave up (busy past the bound, failed). */
export type AheadOutcome = "room" | "reclaimed" | "waited" | "busy" | "failed";

export interface AheadOptions {
  /** How often a cap of busy workers is looked at again; default AHEAD_POLL_MS. */
  pollMs?: number;
  sleep?: (ms: number) => Promise<void>;
}

type Look =
  | { kind: "room" }
  | { kind: "reclaiming"; among: string; done: Promise<void> }
  | { kind: "busy"; busy: number }
  | { kind: "unlisted"; reason: string };

/** A cap of busy workers is looked at again this often while a turn waits for room. */
export const AHEAD_POLL_MS = 2_000;

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

/** How many leases' caps are remembered for their sessions' later re-placements (the oldest forgotten first). */
const REMEMBERED_CAPS = 1_024;

/** The cap a lease was placed under, and how long a turn waits at it. */
export interface LeaseCap {
  maxWorkers: number;
  waitMs: number;
}

export class WorkerCap {
  #tail: Promise<unknown> = Promise.resolve();
  readonly #caps = new Map<string, LeaseCap>();
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

  /**
   * Remembers the cap `leaseId` was placed under: core does not say which profile a reclaimed session's placement
   * came from, and the turn that places it again (makeRoomForTurn) needs that profile's cap and wait.
   */
  remember(leaseId: string, cap: LeaseCap): void {
    this.#caps.delete(leaseId);
    this.#caps.set(leaseId, cap);
    if (this.#caps.size > REMEMBERED_CAPS) this.#caps.delete(this.#caps.keys().next().value as string);
  }

  /** The cap `leaseId` was placed under, if this gateway process placed it under one. */
  capOf(leaseId: string): LeaseCap | undefined {
    return this.#caps.get(leaseId);
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
    const look = await this.#look(maxWorkers);
    if (look.kind === "room") return;
    if (look.kind === "reclaiming") throw new WorkerCapReclaimingError(maxWorkers, look.among);
    if (look.kind === "busy") throw new WorkerCapReachedError(maxWorkers, this.#counted.size, look.busy);
    throw new WorkerCapReclaimError(maxWorkers, look.reason);
  }

  /**
   * One look at the cap, under the lock: room; a reclaim under way (one started before, or started here for the
   * least recently active idle worker); every counted worker busy (or still being placed: never a candidate); or
   * the gateway's workers not listed, and why.
   */
  async #look(maxWorkers: number): Promise<Look> {
    if (this.#counted.size < maxWorkers) return { kind: "room" };
    if (this.#reclaiming) return { kind: "reclaiming", ...this.#reclaiming };
    const live = [...this.#counted.values()].filter((c) => c.phase === "live").map((c) => c.leaseId);
    if (live.length === 0) return { kind: "busy", busy: this.#counted.size };
    const reclaimer = this.reclaimer();
    if (!reclaimer) return { kind: "unlisted", reason: "the plugin's gateway routes are not registered" };
    let workers: CapWorker[];
    try {
      workers = await reclaimer.workers();
    } catch (error) {
      return { kind: "unlisted", reason: (error as Error).message };
    }
    const idle = workers.filter((w) => live.includes(w.leaseId) && !w.busy).map((w) => w.leaseId);
    if (idle.length === 0) {
      const busy = this.#counted.size - live.length + workers.filter((w) => live.includes(w.leaseId) && w.busy).length;
      return { kind: "busy", busy };
    }
    return { kind: "reclaiming", ...this.#startReclaim(maxWorkers, reclaimer, idle, live.length) };
  }

  /** Starts the reclaim of the least recently active of `idle` (the only one under way until it ends). */
  #startReclaim(
    maxWorkers: number,
    reclaimer: Reclaimer,
    idle: string[],
    live: number,
  ): { among: string; done: Promise<void> } {
    const among = `${idle.length} idle of ${live}`;
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
    return this.#reclaiming;
  }

  /**
   * Makes room for a placement that has not started yet (a turn's, from the `before_dispatch` hook), outside any
   * placement in flight, so a reclaim can be awaited: at the cap it reclaims the least recently active idle worker
   * and waits for it; while every worker is busy it waits for one to become idle, checking every `pollMs`, up to
   * `waitMs`. Never throws: the placement that follows applies the cap itself (and refuses, saying why, if the
   * room is not there). Resolves with what it did.
   */
  async makeRoomAhead(maxWorkers: number, waitMs: number, options: AheadOptions = {}): Promise<AheadOutcome> {
    const sleep = options.sleep ?? ((ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms)));
    const pollMs = options.pollMs ?? AHEAD_POLL_MS;
    const deadline = this.now() + waitMs;
    let waited = false;
    for (;;) {
      const look = await this.#locked(() => this.#look(maxWorkers));
      if (look.kind === "room") return waited ? "waited" : "room";
      if (look.kind === "reclaiming") {
        // A reclaim (started here, or by a placement before) ended: reclaimed, or it found its victim busy after all.
        await look.done;
        if (this.#counted.size < maxWorkers) return "reclaimed";
      }
      if (look.kind === "unlisted") {
        this.logger.warn(`vercel-sandbox: maxWorkers ${maxWorkers}: could not list workers (${look.reason})`);
        return "failed";
      }
      // Every counted worker is busy (or still being placed): wait for one to finish its turn, up to the bound.
      if (this.now() + pollMs > deadline) return "busy";
      waited = true;
      await sleep(pollMs);
    }
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
