// The notification signature and the host's verification: a genuine notification passes once; a tampered body,
// a wrong secret, a missing header, a stale or future timestamp and a replayed nonce are each refused.
import { describe, expect, it } from "vitest";
import { MemoryNonceStore, NonceStoreFullError, verifyNotification } from "../../src/host/index.js";
import type { Notification } from "../../src/protocol/protocol.js";
import { NONCE_HEADER, SIGNATURE_HEADER, signNotification, TIMESTAMP_HEADER } from "../../src/protocol/signature.js";

const SECRET = "test-secret-0123456789abcdef";
const NOW = 1_800_000_000_000;
const notification: Notification = {
  version: 1,
  reason: "idle",
  instanceId: "i-1",
  sentAtMs: NOW,
  lastActivityMs: NOW - 45 * 60_000,
};
const body = JSON.stringify(notification);

function verify(
  headers: Record<string, string>,
  options: { body?: string; nowMs?: number; nonces?: MemoryNonceStore } = {},
) {
  return verifyNotification({
    secret: SECRET,
    headers,
    body: options.body ?? body,
    nonces: options.nonces ?? new MemoryNonceStore(),
    nowMs: options.nowMs ?? NOW,
  });
}

describe("notification signature", () => {
  it("a genuine notification verifies and yields the parsed notification", async () => {
    const headers = signNotification(SECRET, body, NOW);
    expect(headers[SIGNATURE_HEADER]).toMatch(/^v1=[0-9a-f]{64}$/);
    expect(headers[NONCE_HEADER]).toMatch(/^[0-9a-f]{32}$/);
    expect(await verify(headers)).toEqual({ ok: true, notification });
  });

  it("verifies headers given as a Fetch API Headers object", async () => {
    const result = await verifyNotification({
      secret: SECRET,
      headers: new Headers(signNotification(SECRET, body, NOW)),
      body,
      nonces: new MemoryNonceStore(),
      nowMs: NOW,
    });
    expect(result.ok).toBe(true);
  });

  it("a tampered body, another secret, or a changed timestamp or nonce fails the signature", async () => {
    const headers = signNotification(SECRET, body, NOW, "n1");
    expect(await verify(headers, { body: body.replace("idle", "fenced") })).toEqual({
      ok: false,
      reason: "bad-signature",
    });
    expect(await verify(signNotification("another-secret-value", body, NOW))).toEqual({
      ok: false,
      reason: "bad-signature",
    });
    expect(await verify({ ...headers, [TIMESTAMP_HEADER]: String(NOW + 1) })).toEqual({
      ok: false,
      reason: "bad-signature",
    });
    expect(await verify({ ...headers, [NONCE_HEADER]: "n2" })).toEqual({ ok: false, reason: "bad-signature" });
  });

  it("a missing or malformed header is refused before any MAC is computed", async () => {
    const headers = signNotification(SECRET, body, NOW);
    for (const name of [TIMESTAMP_HEADER, NONCE_HEADER, SIGNATURE_HEADER]) {
      const { [name]: _dropped, ...rest } = headers;
      expect(await verify(rest)).toEqual({ ok: false, reason: "missing-header" });
    }
    expect(await verify({ ...headers, [TIMESTAMP_HEADER]: "yesterday" })).toEqual({
      ok: false,
      reason: "missing-header",
    });
  });
});

describe("replay at the window's edges (one clock for the window and the nonce store)", () => {
  const windowMs = 5 * 60_000;
  let clock = NOW;
  const nonces = new MemoryNonceStore(10_000, () => clock);
  const at = (headers: Record<string, string>, nowMs: number) => {
    clock = nowMs;
    return verify(headers, { nonces, nowMs });
  };

  it.each([
    ["sent now", 0],
    ["sent a window ago (the past edge)", -windowMs],
    ["sent a window ahead (the future edge)", windowMs],
    ["sent 1 ms inside the past edge", -windowMs + 1],
    ["sent 1 ms inside the future edge", windowMs - 1],
  ])("a notification %s is refused as a replay for as long as it passes the window", async (_what, offset) => {
    const sentAt = NOW + offset;
    const headers = signNotification(SECRET, body, sentAt);
    expect((await at(headers, NOW)).ok).toBe(true);
    // Instants (from now on) at which the window check would still let it through: now, the window's last
    // instant (sentAt + window) and the one before it.
    const instants = [NOW, sentAt + windowMs - 1, sentAt + windowMs].filter((t) => t >= NOW).sort((a, b) => a - b);
    for (const replayAt of instants) {
      expect(
        await at(headers, replayAt),
        `replay at sentAt${replayAt - sentAt >= 0 ? "+" : ""}${replayAt - sentAt}`,
      ).toEqual({
        ok: false,
        reason: "replayed",
      });
    }
    // One millisecond later the window refuses it by itself.
    expect(await at(headers, sentAt + windowMs + 1)).toEqual({ ok: false, reason: "outside-window" });
  });

  it("1 ms beyond either edge is outside the window and claims no nonce", async () => {
    const store = new MemoryNonceStore(1, () => NOW);
    expect(await verify(signNotification(SECRET, body, NOW - windowMs - 1), { nonces: store })).toEqual({
      ok: false,
      reason: "outside-window",
    });
    expect(await verify(signNotification(SECRET, body, NOW + windowMs + 1), { nonces: store })).toEqual({
      ok: false,
      reason: "outside-window",
    });
    // The store (room for one) is still empty: a genuine notification fits.
    expect((await verify(signNotification(SECRET, body, NOW), { nonces: store })).ok).toBe(true);
  });

  it("a full store fails closed: a new notification throws NonceStoreFullError, earlier ones stay refused", async () => {
    const store = new MemoryNonceStore(2, () => NOW);
    const first = signNotification(SECRET, body, NOW);
    const second = signNotification(SECRET, body, NOW);
    expect((await verify(first, { nonces: store })).ok).toBe(true);
    expect((await verify(second, { nonces: store })).ok).toBe(true);
    const error = await verify(signNotification(SECRET, body, NOW), { nonces: store }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(NonceStoreFullError);
    expect(error).toMatchObject({ name: "NonceStoreFullError", capacity: 2 });
    expect(await verify(first, { nonces: store })).toEqual({ ok: false, reason: "replayed" });
    expect(await verify(second, { nonces: store })).toEqual({ ok: false, reason: "replayed" });
  });
});

describe("replay window", () => {
  const windowMs = 5 * 60_000;

  it("accepts timestamps within the window either side of the host's clock, and refuses beyond it", async () => {
    expect((await verify(signNotification(SECRET, body, NOW - windowMs))).ok).toBe(true);
    expect((await verify(signNotification(SECRET, body, NOW + windowMs))).ok).toBe(true);
    expect(await verify(signNotification(SECRET, body, NOW - windowMs - 1))).toEqual({
      ok: false,
      reason: "outside-window",
    });
    expect(await verify(signNotification(SECRET, body, NOW + windowMs + 1))).toEqual({
      ok: false,
      reason: "outside-window",
    });
  });

  it("a replayed notification (same nonce) is refused inside the window", async () => {
    const nonces = new MemoryNonceStore(10_000, () => NOW);
    const headers = signNotification(SECRET, body, NOW);
    expect((await verify(headers, { nonces })).ok).toBe(true);
    expect(await verify(headers, { nonces, nowMs: NOW + 1_000 })).toEqual({ ok: false, reason: "replayed" });
  });

  it("a forged request does not burn the nonce of a genuine one", async () => {
    const nonces = new MemoryNonceStore();
    const headers = signNotification(SECRET, body, NOW, "shared-nonce");
    expect((await verify({ ...headers, [SIGNATURE_HEADER]: `v1=${"0".repeat(64)}` }, { nonces })).ok).toBe(false);
    expect((await verify(headers, { nonces })).ok).toBe(true);
  });

  it("a full nonce store refuses new notifications (NonceStoreFullError) and forgets no live nonce", () => {
    let now = 0;
    const store = new MemoryNonceStore(2, () => now);
    expect(store.claim("a", 100)).toBe(true);
    expect(store.claim("b", 200)).toBe(true);
    expect(() => store.claim("c", 200)).toThrow(NonceStoreFullError);
    // Both live nonces are still refused: filling the store made nothing replayable.
    expect(store.claim("a", 100)).toBe(false);
    expect(store.claim("b", 200)).toBe(false);
    now = 101; // "a" can no longer pass the window: its slot is free again, "b" is still held
    expect(store.claim("c", 300)).toBe(true);
    expect(store.claim("b", 200)).toBe(false);
  });

  it("a genuine signature over a body that is not a notification is refused", async () => {
    const other = JSON.stringify({ version: 2 });
    expect(await verify(signNotification(SECRET, other, NOW), { body: other })).toEqual({
      ok: false,
      reason: "bad-body",
    });
  });
});
