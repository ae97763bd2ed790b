// Keeps active leases alive. OpenClaw core never calls `renew`, so the provider owns this: armed by
// provision, re-armed by an active inspect (which also covers gateway restarts), stopped by destroy and by
// the plugin service's stop. Each tick looks the sandbox up without waking it and extends the running
// session back to the profile's timeout; a stopped sandbox ends the keepalive instead of being resumed.
//
// Each arming is its own entry: a tick that settles after its lease was disarmed and re-armed only ever
// ends the entry that started it, never the new one.
import { messageOf, redact } from "../infra/index.js";

/** What a tick found: keep ticking, or end with a reason (logged unless the lease simply stopped running). */
export type TickOutcome = { keep: true } | { keep: false; reason?: string };

export interface KeepaliveTarget {
  leaseId: string;
  timeoutMs: number;
  tick: () => Promise<TickOutcome>;
}

export interface KeepaliveLogger {
  warn(message: string): void;
}

interface Entry {
  timer: NodeJS.Timeout;
  running?: Promise<void>;
}

/** Tick often enough that two missed ticks still leave the session alive. */
export function keepaliveIntervalMs(timeoutMs: number): number {
  return Math.max(5_000, Math.min(5 * 60_000, Math.floor(timeoutMs / 3)));
}

/** Below this, a top-up is not worth a request. */
export const MIN_EXTENSION_MS = 1_000;

/**
 * How much to extend a running session by on one tick: back up to the profile timeout when its expiry is
 * known. When the API does not say when it expires, extend by one tick interval: that adds back what the
 * session used since the previous tick, so it neither runs down nor accumulates time (a full timeout per
 * tick would grow it threefold per timeout). 0 means no request.
 */
export function extensionMs(expiresAt: Date | undefined, now: number, timeoutMs: number, intervalMs: number): number {
  const shortfall = expiresAt === undefined ? Math.min(intervalMs, timeoutMs) : timeoutMs - (expiresAt.getTime() - now);
  return shortfall >= MIN_EXTENSION_MS ? Math.round(shortfall) : 0;
}

export class Keepalive {
  private readonly entries = new Map<string, Entry>();

  /** `intervalMs` overrides the interval derived from each lease's timeout (tests, hosts with tight budgets). */
  constructor(
    private readonly logger: KeepaliveLogger,
    private readonly intervalMs?: number,
  ) {}

  /** The tick interval for a lease with this session timeout. */
  intervalFor(timeoutMs: number): number {
    return this.intervalMs ?? keepaliveIntervalMs(timeoutMs);
  }

  isArmed(leaseId: string): boolean {
    return this.entries.has(leaseId);
  }

  armed(): string[] {
    return [...this.entries.keys()];
  }

  arm(target: KeepaliveTarget): void {
    if (this.entries.has(target.leaseId)) return;
    const entry: Entry = {
      timer: setInterval(() => {
        if (entry.running) return;
        entry.running = this.tickOnce(target, entry).finally(() => {
          entry.running = undefined;
        });
      }, this.intervalFor(target.timeoutMs)),
    };
    entry.timer.unref();
    this.entries.set(target.leaseId, entry);
  }

  private async tickOnce(target: KeepaliveTarget, entry: Entry): Promise<void> {
    try {
      const outcome = await target.tick();
      if (outcome.keep || this.entries.get(target.leaseId) !== entry) return;
      this.end(target.leaseId, entry);
      if (outcome.reason) {
        this.logger.warn(`vercel-sandbox keepalive for ${target.leaseId} stopped: ${redact(outcome.reason)}`);
      }
    } catch (error) {
      this.logger.warn(`vercel-sandbox keepalive for ${target.leaseId} failed: ${messageOf(error)}`);
    }
  }

  private end(leaseId: string, entry: Entry): void {
    clearInterval(entry.timer);
    if (this.entries.get(leaseId) === entry) this.entries.delete(leaseId);
  }

  /** Stops the lease's keepalive; resolves once a tick in flight has settled. */
  disarm(leaseId: string): Promise<void> {
    const entry = this.entries.get(leaseId);
    if (!entry) return Promise.resolve();
    this.end(leaseId, entry);
    return entry.running ?? Promise.resolve();
  }

  async stopAll(): Promise<void> {
    await Promise.all([...this.entries.keys()].map((leaseId) => this.disarm(leaseId)));
  }
}
