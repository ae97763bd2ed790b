// The notification signature, shared by the resident (signs) and the host library (verifies): HMAC-SHA256 over
// "v1:<timestamp ms>:<nonce>:<body>", hex, in the `x-vsb-signature` header as "v1=<hex>". The timestamp and
// nonce travel in their own headers and are bound by the signature; the host enforces a replay window and
// remembers nonces for it (see src/host/verify.ts).

import { createHmac, randomBytes, timingSafeEqual } from "node:crypto";

export const SIGNATURE_HEADER = "x-vsb-signature";
export const TIMESTAMP_HEADER = "x-vsb-timestamp";
export const NONCE_HEADER = "x-vsb-nonce";
const VERSION = "v1";

export function signatureFor(secret: string, timestampMs: number, nonce: string, body: string): string {
  const mac = createHmac("sha256", secret).update(`${VERSION}:${timestampMs}:${nonce}:${body}`).digest("hex");
  return `${VERSION}=${mac}`;
}

/** The three headers for `body`, with a fresh 128-bit nonce. */
export function signNotification(
  secret: string,
  body: string,
  timestampMs = Date.now(),
  nonce = randomBytes(16).toString("hex"),
): Record<string, string> {
  return {
    [TIMESTAMP_HEADER]: String(timestampMs),
    [NONCE_HEADER]: nonce,
    [SIGNATURE_HEADER]: signatureFor(secret, timestampMs, nonce, body),
  };
}

/** Constant-time comparison of a presented signature header with the expected one. */
export function signatureMatches(secret: string, timestampMs: number, nonce: string, body: string, presented: string) {
  const expected = Buffer.from(signatureFor(secret, timestampMs, nonce, body));
  const actual = Buffer.from(presented);
  return expected.length === actual.length && timingSafeEqual(expected, actual);
}
