// The notification signature and the host's verification: a genuine notification passes once; a tampered body,
// a wrong secret, a missing header, a stale or future timestamp and a replayed nonce are each refused.
import { describe, expect, it } from "vitest";
import { MemoryNonceStore, verifyNotification } from "../../src/host/index.js";
import type { Notification } from "../../src/suspend/protocol.js";
import { NONCE_HEADER, SIGNATURE_HEADER, signNotification, TIMESTAMP_HEADER } from "../../src/suspend/signature.js";

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

  it("the nonce store forgets expired nonces and stays bounded", () => {
    let now = 0;
    const store = new MemoryNonceStore(2, () => now);
    expect(store.claim("a", 100)).toBe(true);
    expect(store.claim("a", 100)).toBe(false);
    now = 100;
    expect(store.claim("a", 200)).toBe(true);
    expect(store.claim("b", 200)).toBe(true);
    expect(store.claim("c", 200)).toBe(true); // evicts the oldest ("a")
    expect(store.claim("a", 200)).toBe(true);
  });

  it("a genuine signature over a body that is not a notification is refused", async () => {
    const other = JSON.stringify({ version: 2 });
    expect(await verify(signNotification(SECRET, other, NOW), { body: other })).toEqual({
      ok: false,
      reason: "bad-body",
    });
  });
});
