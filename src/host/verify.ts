// Verifying a notification from the resident: signature (HMAC-SHA256 over version, timestamp, nonce and
// body), a replay window around the host's clock, and a nonce remembered for that window so a captured request
// cannot be replayed inside it. A host with several instances passes a shared NonceStore (e.g. Redis SET NX with
// an expiry of `expiresAtMs - nowMs + 1` ms).

import { Value } from "@sinclair/typebox/value";
import {
  NONCE_HEADER,
  type Notification,
  NotificationSchema,
  SIGNATURE_HEADER,
  signatureMatches,
  TIMESTAMP_HEADER,
  type WakeNotification,
  WakeNotificationSchema,
} from "../protocol/index.js";
import { ExpiringSet } from "./expiring-set.js";

export const DEFAULT_REPLAY_WINDOW_MS = 5 * 60_000;

export interface NonceStore {
  /**
   * Records `nonce` until `expiresAtMs` inclusive (the last instant its request still passes the window); false
   * when it is already recorded (a replay). `nowMs` is the verifier's clock. A store that cannot record it must
   * throw (fail closed), never forget a nonce that has not expired.
   */
  claim(nonce: string, expiresAtMs: number, nowMs: number): boolean | Promise<boolean>;
}

/** The nonce store is full of nonces still inside their window: new notifications are refused until one expires. */
export class NonceStoreFullError extends Error {
  constructor(
    readonly capacity: number,
    /** When the oldest-expiring nonce frees its slot. */
    readonly retryAfterMs: number,
  ) {
    super(
      `the nonce store holds ${capacity} live nonces; refusing new notifications for ${retryAfterMs} ms rather than ` +
        "forgetting one (raise its capacity, or use a shared store)",
    );
    this.name = "NonceStoreFullError";
  }
}

/**
 * An in-memory NonceStore for one host instance, bounded: nonces are pruned only once expired; when it is full of
 * live ones it throws NonceStoreFullError instead of evicting one (an evicted nonce could be replayed).
 */
export class MemoryNonceStore implements NonceStore {
  readonly #seen: ExpiringSet;
  readonly #now: () => number;

  constructor(max = 10_000, now: () => number = Date.now) {
    this.#seen = new ExpiringSet(max);
    this.#now = now;
  }

  claim(nonce: string, expiresAtMs: number, nowMs: number = this.#now()): boolean {
    // Live through `expiresAtMs` itself: at that moment the request still passes the window check.
    return this.#seen.add(nonce, expiresAtMs, nowMs, (max, retryAfterMs) => new NonceStoreFullError(max, retryAfterMs));
  }
}

export type VerifyFailure = "missing-header" | "bad-signature" | "outside-window" | "replayed" | "bad-body";
export type VerifyResult = { ok: true; notification: Notification } | { ok: false; reason: VerifyFailure };

export interface VerifyOptions {
  secret: string;
  /** Request headers (lower-case names, as Node and the Fetch API give them). */
  headers: Record<string, string | string[] | undefined> | Headers;
  /** The raw body exactly as received. */
  body: string;
  nonces: NonceStore;
  windowMs?: number;
  nowMs?: number;
}

function header(headers: VerifyOptions["headers"], name: string): string | undefined {
  const value = headers instanceof Headers ? headers.get(name) : headers[name];
  return Array.isArray(value) ? value[0] : (value ?? undefined);
}

/**
 * Checks signature, window, nonce (in that order; a nonce is claimed only for a genuine, fresh request). Throws
 * what the nonce store throws (NonceStoreFullError for the in-memory one): answer 503 so the resident retries.
 */
export async function verifyNotification(options: VerifyOptions): Promise<VerifyResult> {
  const verified = await verifySigned(options);
  if (!verified.ok) return verified;
  if (!Value.Check(NotificationSchema, verified.parsed)) return { ok: false, reason: "bad-body" };
  return { ok: true, notification: verified.parsed };
}

export type WakeVerifyResult = { ok: true; notification: WakeNotification } | { ok: false; reason: VerifyFailure };

/** The same checks for a scheduled-wake notification (`kind: "wake"`, docs/protocol.md). */
export async function verifyWakeNotification(options: VerifyOptions): Promise<WakeVerifyResult> {
  const verified = await verifySigned(options);
  if (!verified.ok) return verified;
  if (!Value.Check(WakeNotificationSchema, verified.parsed)) return { ok: false, reason: "bad-body" };
  return { ok: true, notification: verified.parsed };
}

/** Which of the two notifications a body is (unverified; verify it with the matching function). */
export function notificationKind(body: string): "wake" | "sleep" {
  try {
    return (JSON.parse(body) as { kind?: unknown })?.kind === "wake" ? "wake" : "sleep";
  } catch {
    return "sleep";
  }
}

async function verifySigned(
  options: VerifyOptions,
): Promise<{ ok: true; parsed: unknown } | { ok: false; reason: VerifyFailure }> {
  const timestamp = header(options.headers, TIMESTAMP_HEADER);
  const nonce = header(options.headers, NONCE_HEADER);
  const signature = header(options.headers, SIGNATURE_HEADER);
  if (!timestamp || !nonce || !signature || !/^[0-9]{1,16}$/.test(timestamp) || nonce.length > 128) {
    return { ok: false, reason: "missing-header" };
  }
  const timestampMs = Number(timestamp);
  if (!signatureMatches(options.secret, timestampMs, nonce, options.body, signature)) {
    return { ok: false, reason: "bad-signature" };
  }
  const now = options.nowMs ?? Date.now();
  const windowMs = options.windowMs ?? DEFAULT_REPLAY_WINDOW_MS;
  if (Math.abs(now - timestampMs) > windowMs) return { ok: false, reason: "outside-window" };
  // Held until the window would refuse it by itself: accepted while |now - timestamp| <= window.
  if (!(await options.nonces.claim(nonce, timestampMs + windowMs, now))) return { ok: false, reason: "replayed" };
  let parsed: unknown;
  try {
    parsed = JSON.parse(options.body);
  } catch {
    return { ok: false, reason: "bad-body" };
  }
  return { ok: true, parsed };
}
