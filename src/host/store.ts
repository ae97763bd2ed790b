// The host's shared state behind one small interface, so that any number of host instances (Vercel Function
// instances, or several plain servers) agree on it: notification nonces (single-use for the replay window), the
// wake schedule (the gateway's signed wake snapshot, revision-checked), dedupe of incoming events by id, and the
// admission lock with VM1's lifecycle (asleep / waking / awake / sleeping), so VM1 is woken once and never put to
// sleep while a wake is under way. MemoryHostStore is the one-instance implementation (and the pure-logic tests');
// RedisHostStore (redis-store.ts) is the shared one. A store that cannot answer throws (HostStoreUnavailableError
// for Redis): every caller refuses then (fail closed), never guesses.
import { randomBytes } from "node:crypto";
import { ExpiringSet } from "./expiring-set.js";
import { MemoryNonceStore, type NonceStore } from "./verify.js";
import { MemoryWakeStore, type WakeStore } from "./wake.js";

/** VM1 as the hosts know it: settled (asleep, awake) or under the admission lock (waking, sleeping). */
export type VmLifecycle = "asleep" | "waking" | "awake" | "sleeping";
/** What the holder of the admission lock is doing. */
export type AdmissionIntent = "waking" | "sleeping";
/** What a finished wake or sleep leaves VM1 as. */
export type SettledLifecycle = "asleep" | "awake";

/** Proof of holding the admission lock: only its token releases or extends it. Never log the token. */
export interface AdmissionLease {
  readonly intent: AdmissionIntent;
  readonly token: string;
}

export type Admission =
  | { acquired: true; lease: AdmissionLease }
  /** Another instance holds the lock: `state` is what it is doing; try again after `retryAfterMs` at most. */
  | { acquired: false; state: AdmissionIntent; retryAfterMs: number };

export interface AdmissionLock {
  /**
   * Takes the lock for `ttlMs` (1 ms to MAX_TTL_MS) unless another instance holds it. An owner that dies without
   * releasing it loses it when `ttlMs` passes; one still at work extends it.
   */
  acquire(intent: AdmissionIntent, ttlMs: number): Promise<Admission>;
  /** Extends the lock by `ttlMs` from now; false when `lease` no longer holds it (it expired, or was taken). */
  extend(lease: AdmissionLease, ttlMs: number): Promise<boolean>;
  /** Releases the lock and records what VM1 now is; false (and nothing recorded) when `lease` no longer holds it. */
  release(lease: AdmissionLease, settled: SettledLifecycle): Promise<boolean>;
  /** The holder's intent while the lock is held, else the last settled state; "unknown" before any. */
  state(): Promise<VmLifecycle | "unknown">;
}

export interface EventDedupe {
  /** True the first time `eventId` is seen within `ttlMs` (across every instance), false for a repeat. */
  firstSeen(eventId: string, ttlMs: number): Promise<boolean>;
}

/** Everything host instances share. */
export interface HostStore {
  readonly nonces: NonceStore;
  readonly wake: WakeStore;
  readonly events: EventDedupe;
  readonly admission: AdmissionLock;
}

/** The longest expiry the store takes (dedupe windows, lock leases): a week. */
export const MAX_TTL_MS = 7 * 24 * 3_600_000;
/** The longest event id or nonce the store takes. */
export const MAX_ID_LENGTH = 256;

/** The store could not answer (unreachable, timed out, refused): refuse the request (fail closed). */
export class HostStoreUnavailableError extends Error {
  override readonly name = "HostStoreUnavailableError";
  constructor(
    readonly operation: string,
    /** The underlying error's name or code only (never its message, which may carry an address or credential). */
    readonly causeName: string,
  ) {
    super(`the host store could not answer ${operation} (${causeName}); refusing rather than guessing`);
  }
}

/** An input the store refuses to keep (an id too long or empty, an expiry out of range). */
export class HostStoreInputError extends Error {
  override readonly name = "HostStoreInputError";
}

/** The in-memory store is full of live entries: refusing rather than forgetting one (a repeat could pass). */
export class HostStoreFullError extends Error {
  override readonly name = "HostStoreFullError";
  constructor(
    readonly capacity: number,
    readonly retryAfterMs: number,
  ) {
    super(`the host store holds ${capacity} live event ids; refusing new events for ${retryAfterMs} ms`);
  }
}

export function checkId(kind: string, id: string): void {
  if (typeof id !== "string" || id.length === 0 || id.length > MAX_ID_LENGTH) {
    throw new HostStoreInputError(`${kind} must be 1 to ${MAX_ID_LENGTH} characters`);
  }
}

export function checkTtl(ttlMs: number): void {
  if (!Number.isInteger(ttlMs) || ttlMs < 1 || ttlMs > MAX_TTL_MS) {
    throw new HostStoreInputError(`an expiry must be a whole number of ms from 1 to ${MAX_TTL_MS}`);
  }
}

export function checkIntent(intent: string): asserts intent is AdmissionIntent {
  if (intent !== "waking" && intent !== "sleeping") throw new HostStoreInputError("intent: waking or sleeping");
}

export function checkSettled(settled: string): asserts settled is SettledLifecycle {
  if (settled !== "asleep" && settled !== "awake") throw new HostStoreInputError("settled: asleep or awake");
}

/** A fresh owner token (128 random bits). */
export const ownerToken = () => randomBytes(16).toString("hex");

class MemoryEventDedupe implements EventDedupe {
  readonly #seen: ExpiringSet;
  constructor(
    max: number,
    private readonly now: () => number,
  ) {
    this.#seen = new ExpiringSet(max);
  }

  async firstSeen(eventId: string, ttlMs: number): Promise<boolean> {
    checkId("an event id", eventId);
    checkTtl(ttlMs);
    const now = this.now();
    // Gone once `ttlMs` has passed, as Redis's PX: live through its last millisecond.
    return this.#seen.add(
      eventId,
      now + ttlMs - 1,
      now,
      (max, retryAfterMs) => new HostStoreFullError(max, retryAfterMs),
    );
  }
}

class MemoryAdmissionLock implements AdmissionLock {
  #held: { intent: AdmissionIntent; token: string; expiresAtMs: number } | undefined;
  #settled: SettledLifecycle | undefined;
  constructor(private readonly now: () => number) {}

  #live() {
    if (this.#held && this.#held.expiresAtMs <= this.now()) this.#held = undefined;
    return this.#held;
  }

  async acquire(intent: AdmissionIntent, ttlMs: number): Promise<Admission> {
    checkIntent(intent);
    checkTtl(ttlMs);
    const held = this.#live();
    if (held) return { acquired: false, state: held.intent, retryAfterMs: held.expiresAtMs - this.now() };
    const lease = { intent, token: ownerToken() };
    this.#held = { ...lease, expiresAtMs: this.now() + ttlMs };
    return { acquired: true, lease };
  }

  async extend(lease: AdmissionLease, ttlMs: number): Promise<boolean> {
    checkTtl(ttlMs);
    const held = this.#live();
    if (held?.token !== lease.token) return false;
    held.expiresAtMs = this.now() + ttlMs;
    return true;
  }

  async release(lease: AdmissionLease, settled: SettledLifecycle): Promise<boolean> {
    checkSettled(settled);
    if (this.#live()?.token !== lease.token) return false;
    this.#held = undefined;
    this.#settled = settled;
    return true;
  }

  async state(): Promise<VmLifecycle | "unknown"> {
    return this.#live()?.intent ?? this.#settled ?? "unknown";
  }
}

/** The host's state in this process: enough for one instance, and for tests of pure logic. */
export class MemoryHostStore implements HostStore {
  readonly nonces: NonceStore;
  readonly wake: WakeStore;
  readonly events: EventDedupe;
  readonly admission: AdmissionLock;

  constructor(options: { maxEntries?: number; now?: () => number; nonces?: NonceStore; wake?: WakeStore } = {}) {
    const now = options.now ?? Date.now;
    const max = options.maxEntries ?? 10_000;
    this.nonces = options.nonces ?? new MemoryNonceStore(max, now);
    this.wake = options.wake ?? new MemoryWakeStore();
    this.events = new MemoryEventDedupe(max, now);
    this.admission = new MemoryAdmissionLock(now);
  }
}
