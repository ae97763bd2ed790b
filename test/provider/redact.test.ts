import { describe, expect, it } from "vitest";
import { messageOf, redact, registerSecret } from "../../src/provider/redact.js";

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

  it("keeps ordinary text and ignores secrets too short to mask safely", () => {
    registerSecret("abc");
    expect(redact("sandbox abc failed: 500")).toBe("sandbox abc failed: 500");
  });

  it("reads messages of errors and non-errors alike", () => {
    registerSecret("zz-secret-zz");
    expect(messageOf(new Error("x zz-secret-zz"))).toBe("x [redacted]");
    expect(messageOf("plain zz-secret-zz")).toBe("plain [redacted]");
  });
});
