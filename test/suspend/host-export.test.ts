// `openclaw-vercel-sandbox/host` resolves by package name to the built file, with what hosts are told to import,
// and without loading openclaw (a host, e.g. a Vercel Function, does not have it).
import { readFileSync } from "node:fs";
import { beforeAll, describe, expect, it } from "vitest";
import { ensureBuilt } from "../setup/build.js";

beforeAll(() => ensureBuilt(), 300_000);

describe("host export", () => {
  it("exports the client, the verifier and the protocol schemas", async () => {
    const specifier = "openclaw-vercel-sandbox/host";
    const host = (await import(specifier)) as Record<string, unknown>;
    for (const name of [
      "GatewayClient",
      "verifyNotification",
      "MemoryNonceStore",
      "NonceStoreFullError",
      "SuspendAbortedError",
      "NotificationSchema",
      "SuspendResultSchema",
      "StatusResultSchema",
      "ROUTES",
      "SIGNATURE_HEADER",
    ]) {
      expect(host[name], name).toBeDefined();
    }
  });

  it("its built module graph never imports openclaw", () => {
    const seen = new Set<string>();
    const visit = (url: URL) => {
      if (seen.has(url.href)) return;
      seen.add(url.href);
      const text = readFileSync(url, "utf8");
      expect(text, url.pathname).not.toMatch(/from\s+["']openclaw/);
      for (const [, rel] of text.matchAll(/from\s+["'](\.{1,2}\/[^"']+)["']/g)) visit(new URL(rel!, url));
    };
    visit(new URL("../../dist/host/index.js", import.meta.url));
    expect(seen.size).toBeGreaterThan(1);
  });
});
