// The idle clock: what the resident knows about activity on this gateway, kept in memory. Accepted work
// (an inbound message), model calls and tool calls reset it; a turn in flight (run start → end), a model call
// in flight and a cloud worker being provisioned (which no turn covers: a dispatch places the session first)
// keep the gateway busy; status polls and health checks never touch it. A failed turn fences the
// resident (see decide.ts). Time comes from `now`, so every decision is a pure function of recorded facts.

export type ActivityKind = "message" | "model-call" | "tool-call" | "turn" | "provision";

export interface Fence {
  /** When the failed turn was seen. */
  sinceMs: number;
  /** The run that failed, when known (never its content). */
  runId?: string;
}

export interface ClockSnapshot {
  nowMs: number;
  /** Start of this process's clock (the session start for the deadline). */
  startedAtMs: number;
  lastActivityMs: number;
  lastActivityKind: ActivityKind | "start";
  activeTurns: number;
  activeModelCalls: number;
  /** Worker provisions in flight in this gateway's provider. */
  activeProvisions: number;
  fence?: Fence;
  /** The soonest scheduled cron run (epoch ms), when scheduled wake projects one. */
  nextWakeAtMs?: number;
}

export class IdleClock {
  readonly #now: () => number;
  readonly #startedAtMs: number;
  #lastActivityMs: number;
  #lastActivityKind: ActivityKind | "start" = "start";
  readonly #turns = new Set<string>();
  readonly #calls = new Set<string>();
  readonly #provisions = new Map<string, number>();
  #fence: Fence | undefined;
  #nextWake: () => number | undefined = () => undefined;

  constructor(now: () => number = Date.now) {
    this.#now = now;
    this.#startedAtMs = now();
    this.#lastActivityMs = this.#startedAtMs;
  }

  /** Accepted work, a finished model call or a tool call: the gateway was used just now. */
  touch(kind: ActivityKind): void {
    this.#lastActivityMs = this.#now();
    this.#lastActivityKind = kind;
  }

  turnStarted(runId: string): void {
    this.#turns.add(runId);
    this.touch("turn");
  }

  /** A turn ended; `failed` fences the resident until it sleeps (the failed event is not replayed). */
  turnEnded(runId: string, failed: boolean): void {
    this.#turns.delete(runId);
    this.touch("turn");
    if (failed && !this.#fence) this.#fence = { sinceMs: this.#now(), runId };
  }

  modelCallStarted(callId: string): void {
    this.#calls.add(callId);
    this.touch("model-call");
  }

  modelCallEnded(callId: string): void {
    this.#calls.delete(callId);
    this.touch("model-call");
  }

  /** A provision of `leaseId` started (concurrent attempts of one lease are counted apart). */
  provisionStarted(leaseId: string): void {
    this.#provisions.set(leaseId, (this.#provisions.get(leaseId) ?? 0) + 1);
    this.touch("provision");
  }

  provisionEnded(leaseId: string): void {
    const left = (this.#provisions.get(leaseId) ?? 1) - 1;
    if (left > 0) this.#provisions.set(leaseId, left);
    else this.#provisions.delete(leaseId);
    this.touch("provision");
  }

  /** A fresh clock (after resume): activity counts from now. The fence stays until a process restart. */
  restart(): void {
    this.#lastActivityMs = this.#now();
    this.#lastActivityKind = "start";
  }

  /** Where the soonest scheduled cron run is read from (the wake projection). */
  readNextWakeFrom(source: () => number | undefined): void {
    this.#nextWake = source;
  }

  get fenced(): boolean {
    return this.#fence !== undefined;
  }

  snapshot(): ClockSnapshot {
    const nextWakeAtMs = this.#nextWake();
    return {
      nowMs: this.#now(),
      startedAtMs: this.#startedAtMs,
      lastActivityMs: this.#lastActivityMs,
      lastActivityKind: this.#lastActivityKind,
      activeTurns: this.#turns.size,
      activeModelCalls: this.#calls.size,
      activeProvisions: [...this.#provisions.values()].reduce((sum, n) => sum + n, 0),
      ...(this.#fence ? { fence: { ...this.#fence } } : {}),
      ...(nextWakeAtMs !== undefined ? { nextWakeAtMs } : {}),
    };
  }
}
