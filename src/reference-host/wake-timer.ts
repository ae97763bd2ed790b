// The reference host's scheduled wake: one timer for the next wake the kept snapshot asks for. What to do is
// decided by planWake (pure, in the host library) over the kept snapshot, the clock and this host's limits; this
// file is only the I/O shell around it: the timer is re-armed on every accepted snapshot and after every sleep
// (a VM1 put to sleep after its wake time is woken at once), cleared on stop, and when it fires it calls the
// host's wake path (the one a message uses). A wake the host cannot schedule is reported, never dropped.
import { type WakeLimits, type WakePlan, type WakeSchedule, wakeKey } from "../host/index.js";

/** Node's setTimeout holds at most 2^31-1 ms (~24.8 days); a longer delay would fire at once. */
export const MAX_TIMER_MS = 2 ** 31 - 1;

/** What happened to a scheduled wake (for logs, status pages, tests). */
export type WakeEvent =
  | { kind: "armed"; jobId: string; runAtMs: number; atMs: number }
  | { kind: "unschedulable"; jobId: string; runAtMs: number; reason: "too-far" | "after-deadline" }
  /** The timer fired: `woke` false when VM1 was already running (nothing to do). */
  | { kind: "woke"; jobId: string; runAtMs: number; firedAtMs: number; awakeAtMs: number; woke: boolean; ms: number }
  | { kind: "failed"; jobId: string; runAtMs: number; error: string; retryInMs: number };

export interface WakeTimerOptions {
  schedule: WakeSchedule;
  /** How long before the gateway's wake time the host starts waking VM1 (how long a wake takes). */
  aheadMs: number;
  /** The furthest ahead the timer may be set (at most MAX_TIMER_MS). */
  maxAheadMs?: number;
  /** VM1's session deadline as this host knows it, if any. */
  deadlineAtMs?: () => number | undefined;
  /** The host's wake path: wakes VM1 if it sleeps. */
  wake: () => Promise<{ woke: boolean; ms: number }>;
  report: (event: WakeEvent) => void;
  /** After a failed wake, when to try again (default 30 s). */
  retryMs?: number;
  now?: () => number;
}

/** How many served wakes are remembered (the oldest are forgotten first; a forgotten one costs one extra wake). */
const SERVED_MAX = 1_024;

export class WakeTimer {
  readonly #options: WakeTimerOptions;
  readonly #now: () => number;
  readonly #served = new Set<string>();
  #timer: NodeJS.Timeout | undefined;
  #generation = 0;
  #stopped = false;
  #firing = false;

  constructor(options: WakeTimerOptions) {
    this.#options = options;
    this.#now = options.now ?? Date.now;
  }

  /** Plans from the kept snapshot and sets the one timer for it (replacing any); a newer call wins a race. */
  async arm(): Promise<WakePlan> {
    const generation = ++this.#generation;
    const nowMs = this.#now();
    const plan = await this.#options.schedule.plan(nowMs, this.#limits());
    if (this.#stopped || generation !== this.#generation) return plan;
    this.#clear();
    if (plan.kind === "unschedulable") this.#options.report(plan);
    if (plan.kind === "wake") {
      this.#set(plan.atMs - nowMs, () => this.#fire(plan));
      this.#options.report({ kind: "armed", jobId: plan.jobId, runAtMs: plan.runAtMs, atMs: plan.atMs });
    }
    return plan;
  }

  /** Clears the timer for good (the host is shutting down). */
  stop(): void {
    this.#stopped = true;
    this.#generation++;
    this.#clear();
  }

  #limits(): WakeLimits {
    const deadlineAtMs = this.#options.deadlineAtMs?.();
    return {
      aheadMs: this.#options.aheadMs,
      maxAheadMs: Math.min(this.#options.maxAheadMs ?? MAX_TIMER_MS, MAX_TIMER_MS),
      served: this.#served,
      ...(deadlineAtMs !== undefined ? { deadlineAtMs } : {}),
    };
  }

  async #fire(plan: Extract<WakePlan, { kind: "wake" }>): Promise<void> {
    // The wake under way covers a timer re-armed meanwhile (the woken gateway's snapshot arms one at once).
    if (this.#firing) return;
    this.#firing = true;
    const job = { jobId: plan.jobId, runAtMs: plan.runAtMs };
    const firedAtMs = this.#now();
    try {
      const awake = await this.#options.wake();
      this.#serve(wakeKey(plan));
      this.#options.report({ kind: "woke", ...job, firedAtMs, awakeAtMs: this.#now(), ...awake });
    } catch (error) {
      if (this.#stopped) return;
      const retryInMs = this.#options.retryMs ?? 30_000;
      this.#options.report({ kind: "failed", ...job, error: (error as Error).name, retryInMs });
      // Unless a newer snapshot or a sleep re-armed it meanwhile, try again later (never in a tight loop).
      if (this.#timer === undefined) this.#set(retryInMs, () => this.arm());
    } finally {
      this.#firing = false;
    }
  }

  #serve(key: string): void {
    this.#served.add(key);
    for (const oldest of this.#served) {
      if (this.#served.size <= SERVED_MAX) break;
      this.#served.delete(oldest);
    }
  }

  #set(delayMs: number, run: () => Promise<unknown>): void {
    const timer = setTimeout(
      () => {
        if (this.#timer === timer) this.#timer = undefined;
        void run().catch(() => undefined);
      },
      Math.max(0, delayMs),
    );
    // The host's server keeps the process alive; a pending wake alone must not.
    timer.unref();
    this.#timer = timer;
  }

  #clear(): void {
    if (this.#timer !== undefined) clearTimeout(this.#timer);
    this.#timer = undefined;
  }
}
