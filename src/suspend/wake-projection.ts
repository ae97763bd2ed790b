// Safe external cron projection (OpenClaw's pattern, docs/plugins/hooks.md): the gateway's next cron run times go
// to the host as one complete snapshot, never deltas. Only `cron_reconciled` adopts a scheduler (and its abort
// signal); `cron_changed` only asks for a fresh read. One latest-state worker is in flight: a newer request
// aborts the attempt under way, so a stale snapshot is never sent after a newer one, and a failed send is
// retried with backoff until it lands or a newer one replaces it. The latest snapshot is kept for GET status
// and for the idle clock (a job due soon is a reason not to sleep).
import { setTimeout as sleep } from "node:timers/promises";
import { type WakeNotification, type WakeSnapshot, wakesOf } from "../protocol/index.js";

export interface CronReader {
  list(options: { includeDisabled: true }): Promise<unknown[]>;
}

export interface WakeProjectorOptions {
  instanceId: string;
  leadMs: number;
  /** Sends one notification (resolves once the host durably accepted it); undefined when no host is configured. */
  send?: (notification: WakeNotification, signal: AbortSignal) => Promise<void>;
  logger: { info(message: string): void; warn(message: string): void };
  now?: () => number;
  /** Backoff after a failed send (first, then doubling up to 30 s). */
  retryMs?: number;
}

export class WakeProjector {
  readonly #options: WakeProjectorOptions;
  readonly #now: () => number;
  readonly #lifecycle = new AbortController();
  #cron: CronReader | undefined;
  #enabled = false;
  #owner: AbortSignal | undefined;
  #requested = 0;
  #applied = 0;
  #worker: Promise<void> = Promise.resolve();
  #attempt: AbortController | undefined;
  #latest: WakeSnapshot | undefined;
  #lastRevision = 0;

  constructor(options: WakeProjectorOptions) {
    this.#options = options;
    this.#now = options.now ?? Date.now;
  }

  /** `cron_reconciled`: adopt this scheduler (or none, when cron is disabled) and project. */
  reconciled(enabled: boolean, cron: CronReader | undefined, signal: AbortSignal | undefined): Promise<void> {
    if (enabled && !cron) {
      this.#options.logger.warn("vercel-sandbox: cron reconciliation exposed no scheduler; wake list not projected");
      return this.#worker;
    }
    this.#cron = cron;
    this.#enabled = enabled;
    this.#owner = signal;
    return this.#request();
  }

  /** `cron_changed`: re-read the adopted scheduler (ignored before the first reconciliation). */
  changed(): Promise<void> {
    return this.#owner ? this.#request() : this.#worker;
  }

  /** The latest snapshot read from the scheduler (sent or not); undefined before the first reconciliation. */
  latest(): WakeSnapshot | undefined {
    return this.#latest;
  }

  /** The soonest job's due time, if any. */
  nextWakeAtMs(): number | undefined {
    return this.#latest?.wakes[0]?.runAtMs;
  }

  async stop(): Promise<void> {
    this.#lifecycle.abort();
    this.#attempt?.abort();
    await this.#worker;
  }

  #request(): Promise<void> {
    const target = ++this.#requested;
    this.#attempt?.abort();
    this.#worker = this.#worker.then(async () => {
      if (!this.#lifecycle.signal.aborted && this.#applied < target) await this.#project();
    });
    return this.#worker;
  }

  async #project(): Promise<void> {
    let retryMs = this.#options.retryMs ?? 1_000;
    while (!this.#lifecycle.signal.aborted && this.#applied < this.#requested) {
      const owner = this.#owner;
      if (!owner || owner.aborted) return;
      const target = this.#requested;
      const attempt = new AbortController();
      this.#attempt = attempt;
      const signal = AbortSignal.any([this.#lifecycle.signal, owner, attempt.signal]);
      try {
        const jobs = this.#enabled && this.#cron ? await this.#cron.list({ includeDisabled: true }) : [];
        if (signal.aborted || target !== this.#requested) continue;
        const { wakes, truncated } = wakesOf(jobs as Parameters<typeof wakesOf>[0]);
        this.#lastRevision = Math.max(this.#now(), this.#lastRevision + 1);
        const snapshot: WakeSnapshot = { revision: this.#lastRevision, wakes, ...(truncated ? { truncated } : {}) };
        this.#latest = snapshot;
        await this.#options.send?.(
          {
            version: 1,
            kind: "wake",
            instanceId: this.#options.instanceId,
            sentAtMs: this.#now(),
            leadMs: this.#options.leadMs,
            snapshot,
          },
          signal,
        );
        if (signal.aborted || target !== this.#requested) continue;
        this.#applied = target;
        retryMs = this.#options.retryMs ?? 1_000;
        if (this.#options.send) {
          this.#options.logger.info(
            `vercel-sandbox: projected ${wakes.length} wake(s) to the host (revision ${snapshot.revision})`,
          );
        }
      } catch (error) {
        if (this.#lifecycle.signal.aborted || owner.aborted) return;
        if (attempt.signal.aborted) continue;
        this.#options.logger.warn(
          `vercel-sandbox: could not project the wake list (${(error as Error).message}); retrying in ${retryMs} ms`,
        );
        try {
          await sleep(retryMs, undefined, { signal });
        } catch {
          if (this.#lifecycle.signal.aborted) return;
        }
        retryMs = Math.min(retryMs * 2, 30_000);
      } finally {
        if (this.#attempt === attempt) this.#attempt = undefined;
      }
    }
  }
}
