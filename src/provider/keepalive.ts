// Keeps active leases alive. OpenClaw core never calls `renew`, so the provider owns this: armed by
// provision, re-armed by an active inspect (which also covers gateway restarts), stopped by destroy and by
// the plugin service's stop. Each tick looks the sandbox up without waking it and extends the running
// session back to the profile's timeout; a stopped sandbox ends the keepalive instead of being resumed.
import { messageOf } from "./redact.js";

export interface KeepaliveTarget {
  leaseId: string;
  timeoutMs: number;
  /** One tick: returns false when the lease is no longer running and the keepalive should end. */
  tick: () => Promise<boolean>;
}

export interface KeepaliveLogger {
  warn(message: string): void;
}

/** Tick often enough that two missed ticks still leave the session alive. */
export function keepaliveIntervalMs(timeoutMs: number): number {
  return Math.max(5_000, Math.min(5 * 60_000, Math.floor(timeoutMs / 3)));
}

export class Keepalive {
  private readonly timers = new Map<string, { timer: NodeJS.Timeout; running?: Promise<void> }>();

  /** `intervalMs` overrides the interval derived from each lease's timeout (tests, hosts with tight budgets). */
  constructor(
    private readonly logger: KeepaliveLogger,
    private readonly intervalMs?: number,
  ) {}

  isArmed(leaseId: string): boolean {
    return this.timers.has(leaseId);
  }

  arm(target: KeepaliveTarget): void {
    if (this.timers.has(target.leaseId)) return;
    const entry: { timer: NodeJS.Timeout; running?: Promise<void> } = {
      timer: setInterval(() => {
        if (entry.running) return;
        entry.running = target
          .tick()
          .then((keep) => {
            if (!keep) this.disarm(target.leaseId);
          })
          .catch((error: unknown) => {
            this.logger.warn(`vercel-sandbox keepalive for ${target.leaseId} failed: ${messageOf(error)}`);
          })
          .finally(() => {
            entry.running = undefined;
          });
      }, this.intervalMs ?? keepaliveIntervalMs(target.timeoutMs)),
    };
    entry.timer.unref();
    this.timers.set(target.leaseId, entry);
  }

  disarm(leaseId: string): Promise<void> {
    const entry = this.timers.get(leaseId);
    if (!entry) return Promise.resolve();
    clearInterval(entry.timer);
    this.timers.delete(leaseId);
    return entry.running ?? Promise.resolve();
  }

  async stopAll(): Promise<void> {
    await Promise.all([...this.timers.keys()].map((leaseId) => this.disarm(leaseId)));
  }
}
