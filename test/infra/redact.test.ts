import { describe, expect, it } from "vitest";
import { forgetSecrets, knownSecretCount, messageOf, redact, registerSecret } from "../../src/infra/redact.js";

describe("redaction", () => {
  it("masks every registered secret wherever it appears", () => {
    registerSecret("tok_live_0123456789");
    expect(redact("failed with tok_live_0123456789 and again tok_live_0123456789")).toBe(
      "failed with [redacted] and again [redacted]",
    );
  });

  it("masks token-shaped text it never saw", () => {
    expect(redact("Authorization: Bearer abcdefghijklmnop")).not.toContain("abcdefghijklmnop");
    expect(redact("got eyJhbGciOiJub25lIn0.eyJvd25lcl9pZCI6InRlYW0ifQ.sig")).toBe("got [redacted]");
    expect(redact('{"token":"s3cr3t-value"}')).not.toContain("s3cr3t-value");
    expect(redact("setup_code=ABCDEF123")).not.toContain("ABCDEF123");
  });

  it("keeps ordinary text", () => {
    expect(redact("sandbox openclaw-1 failed: 500")).toBe("sandbox openclaw-1 failed: 500");
  });

  it("keeps the words after a secret's name and the names of variables: only values are secrets", () => {
    const message = "token: environment variable VERCEL_TOKEN is not set for the gateway";
    expect(redact(message)).toBe(message);
    expect(redact("password: missing; secret=VERCEL_OIDC_TOKEN")).toBe("password: missing; secret=VERCEL_OIDC_TOKEN");
    registerSecret("vtok_9f8e7d6c5b4a");
    expect(redact(`${message}; the old one was vtok_9f8e7d6c5b4a`)).toBe(`${message}; the old one was [redacted]`);
  });

  it("masks values after a secret's name, and the credential of an authorization header whatever its scheme", () => {
    expect(redact("token: abcDEF123456 expired")).toBe("token: [redacted] expired");
    expect(redact("token=VERCEL_TOKEN_IS_NOT_IT9x")).toBe("token=[redacted]");
    expect(redact('{"token":"lowercaseonlyvalue"}')).toBe('{"token":"[redacted]"}');
    expect(redact("Authorization: Basic dXNlcjpwYXNzd29yZA==")).not.toContain("dXNlcjpwYXNzd29yZA");
  });

  it("masks a registered secret however short it is, without mangling other placeholders", () => {
    registerSecret("q7");
    registerSecret("long-secret-q7-value");
    expect(redact("pin q7, key long-secret-q7-value")).toBe("pin [redacted], key [redacted]");
  });

  it("drops a lease's secrets when the lease ends, and keeps those another owner still uses", () => {
    registerSecret("lease-a-bootstrap-token", "vsb_a");
    registerSecret("shared-credential-token");
    registerSecret("shared-credential-token", "vsb_a");
    forgetSecrets("vsb_a");
    expect(redact("lease-a-bootstrap-token")).toBe("lease-a-bootstrap-token");
    expect(redact("shared-credential-token")).toBe("[redacted]");
  });

  it("keeps the registry bounded, dropping the least recently registered value first", () => {
    registerSecret("credential-in-use-zz");
    for (let i = 0; i < 1000; i += 1) {
      registerSecret(`bootstrap-${i}-xxxxxxxx`, `vsb_${i}`);
      if (i % 100 === 0) registerSecret("credential-in-use-zz");
    }
    expect(knownSecretCount()).toBeLessThanOrEqual(256);
    expect(redact("bootstrap-999-xxxxxxxx credential-in-use-zz")).toBe("[redacted] [redacted]");
    expect(redact("bootstrap-0-xxxxxxxx")).toBe("bootstrap-0-xxxxxxxx");
  });

  it("reads messages of errors and non-errors alike", () => {
    registerSecret("zz-secret-zz");
    expect(messageOf(new Error("x zz-secret-zz"))).toBe("x [redacted]");
    expect(messageOf("plain zz-secret-zz")).toBe("plain [redacted]");
  });
});
