// The resident timer, run as a plugin service: polls the idle clock and, when sleep is due (idle, the deadline
// margin reached, or fenced), notifies the host. One notification in flight at a time; a failed one is retried
// on later polls (and within itself, with backoff). Timers are unref'd and end with the service.

import type { Notification } from "../protocol/index.js";
import type { IdleClock } from "./clock.js";
import { dueReason, type NotifyMemory, type SleepPolicy, shouldNotify } from "./decide.js";

export interface ResidentOptions {
  clock: IdleClock;
  policy: SleepPolicy;
  instanceId: string;
  pollMs: number;
  renotifyMs: number;
  /** Sends one notification (with its own retries); undefined when no host is configured. */
  notify?: (notification: Notification, signal: AbortSignal) => Promise<void>;
  logger: { info(message: string): void; warn(message: string): void };
}

export class Resident {
  readonly #options: ResidentOptions;
  #timer: NodeJS.Timeout | undefined;
  #inFlight: Promise<void> | undefined;
  #last: NotifyMemory | undefined;
  #abort = new AbortController();

  constructor(options: ResidentOptions) {
    this.#options = options;
  }

  start(): void {
    if (this.#timer) return;
    this.#abort = new AbortController();
    this.#timer = setInterval(() => void this.poll(), this.#options.pollMs);
    this.#timer.unref();
  }

  async stop(): Promise<void> {
    if (this.#timer) clearInterval(this.#timer);
    this.#timer = undefined;
    this.#abort.abort();
    await this.#inFlight;
  }

  /** One poll: notifies when due (exposed for tests; the timer calls it). Resolves when that notify settled. */
  poll(): Promise<void> {
    if (this.#inFlight) return this.#inFlight;
    const { clock, policy, notify, renotifyMs, logger, instanceId } = this.#options;
    const snapshot = clock.snapshot();
    const reason = dueReason(snapshot, policy);
    if (!notify || !reason || !shouldNotify(reason, this.#last, snapshot.nowMs, renotifyMs)) return Promise.resolve();
    const notification: Notification = {
      version: 1,
      reason,
      instanceId,
      sentAtMs: snapshot.nowMs,
      lastActivityMs: snapshot.lastActivityMs,
      ...(policy.deadlineAtMs !== undefined ? { deadlineAtMs: policy.deadlineAtMs } : {}),
    };
    const signal = this.#abort.signal;
    this.#inFlight = notify(notification, signal)
      .then(() => {
        this.#last = { reason, atMs: snapshot.nowMs };
        logger.info(`vercel-sandbox: notified the host (${reason})`);
      })
      .catch((error: unknown) => {
        if (!signal.aborted)
          logger.warn(`vercel-sandbox: could not notify the host (${reason}): ${(error as Error).message}`);
      })
      .finally(() => {
        this.#inFlight = undefined;
      });
    return this.#inFlight;
  }
}
