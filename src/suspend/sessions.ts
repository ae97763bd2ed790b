// Activity per conversation (session key), for the worker cap: which sessions are in an active turn (a run or a
// model call in flight) and when each was last active. Fed by the same hooks and agent events as the idle
// clock; kept in memory, bounded (the least recently active idle sessions are forgotten first). Never holds
// content: keys, run ids and call ids only.

const MAX_SESSIONS = 4_096;

interface Entry {
  lastMs: number;
  runs: Set<string>;
  calls: Set<string>;
}

export interface SessionState {
  active: boolean;
  lastActiveMs: number;
}

export class SessionActivity {
  readonly #sessions = new Map<string, Entry>();

  constructor(private readonly now: () => number = Date.now) {}

  touch(sessionKey: string | undefined): void {
    this.#entry(sessionKey);
  }

  runStarted(sessionKey: string | undefined, runId: string): void {
    this.#entry(sessionKey)?.runs.add(runId);
  }

  runEnded(sessionKey: string | undefined, runId: string): void {
    this.#entry(sessionKey)?.runs.delete(runId);
  }

  callStarted(sessionKey: string | undefined, callId: string): void {
    this.#entry(sessionKey)?.calls.add(callId);
  }

  callEnded(sessionKey: string | undefined, callId: string): void {
    this.#entry(sessionKey)?.calls.delete(callId);
  }

  state(sessionKey: string): SessionState | undefined {
    const entry = this.#sessions.get(sessionKey);
    return entry ? { active: entry.runs.size + entry.calls.size > 0, lastActiveMs: entry.lastMs } : undefined;
  }

  #entry(sessionKey: string | undefined): Entry | undefined {
    if (typeof sessionKey !== "string" || sessionKey.length === 0 || sessionKey.length > 512) return undefined;
    let entry = this.#sessions.get(sessionKey);
    if (entry) this.#sessions.delete(sessionKey);
    entry ??= { lastMs: 0, runs: new Set(), calls: new Set() };
    entry.lastMs = this.now();
    // Re-inserted last: the map's order is least recently active first.
    this.#sessions.set(sessionKey, entry);
    if (this.#sessions.size > MAX_SESSIONS) this.#evictOne();
    return entry;
  }

  #evictOne(): void {
    for (const [key, entry] of this.#sessions) {
      if (entry.runs.size + entry.calls.size === 0) {
        this.#sessions.delete(key);
        return;
      }
    }
  }
}
