// Fast checks of the real-gateway harness's pure helpers (no gateway is started here).
import { readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { machineCacheDir } from "../support/machine-cache.js";
import { checkNodeForOpenClaw, freePort, parseCliJson, REPO_ROOT } from "./harness.js";
import { BETWEEN_VERSIONS, GATEWAY_VERSIONS, NEWEST_OPENCLAW_VERSION, openclawEntryOf } from "./versions.js";

describe("gateway harness helpers", () => {
  it("accepts exactly the Node versions openclaw@2026.9.2 declares in engines", () => {
    for (const ok of ["22.22.3", "22.23.0", "24.15.0", "24.22.3", "25.9.0", "26.0.0"]) {
      expect(checkNodeForOpenClaw(ok), ok).toBeUndefined();
    }
    for (const bad of ["20.20.2", "22.22.2", "23.11.0", "24.14.9", "25.8.1"]) {
      expect(checkNodeForOpenClaw(bad), bad).toMatch(/needs Node >=22\.22\.3/);
    }
  });

  it("accepts exactly the Node versions the later 2026.9.x releases declare: >=24.16.0 <25 || >=26.1.0", () => {
    for (const ok of ["24.16.0", "24.22.3", "26.1.0", "27.0.0"]) {
      expect(checkNodeForOpenClaw(ok, "2026.9.6"), ok).toBeUndefined();
    }
    for (const bad of ["22.22.3", "24.15.0", "25.9.0", "26.0.0"]) {
      expect(checkNodeForOpenClaw(bad, "2026.9.3"), bad).toMatch(/openclaw@2026\.9\.3 needs Node >=24\.16\.0/);
    }
  });

  it("the peer range is exactly the releases the specs run: the pinned one first, the newest last", () => {
    const pkg = JSON.parse(readFileSync(path.join(REPO_ROOT, "package.json"), "utf8"));
    expect(GATEWAY_VERSIONS[0]).toBe(pkg.devDependencies.openclaw);
    expect(pkg.peerDependencies.openclaw).toBe(`>=${GATEWAY_VERSIONS[0]} <=${NEWEST_OPENCLAW_VERSION}`);
    expect(BETWEEN_VERSIONS).toEqual(GATEWAY_VERSIONS.slice(1, -1));
  });

  it("runs the pinned release from the repo's node_modules and a later one from its own install in the machine cache", () => {
    expect(openclawEntryOf("2026.9.2")).toBe(path.join(REPO_ROOT, "node_modules", "openclaw", "openclaw.mjs"));
    const later = path.relative(machineCacheDir(), openclawEntryOf("2026.9.6"));
    expect(later).toMatch(/^openclaw-gateways\/2026\.9\.6-[0-9a-f]{16}\/node_modules\/openclaw\/openclaw\.mjs$/);
    expect(() => openclawEntryOf("2026.9.7")).toThrow(/not one of the tested gateways/);
  });

  it("parses the JSON document a --json CLI command prints, around banner lines", () => {
    expect(parseCliJson('{"valid":true}\n')).toEqual({ valid: true });
    expect(parseCliJson('banner line\n{\n  "ok": false\n}\ntrailing note\n')).toEqual({ ok: false });
    expect(parseCliJson("[1,2]")).toEqual([1, 2]);
    expect(parseCliJson("no json here")).toBeUndefined();
    expect(parseCliJson("")).toBeUndefined();
  });

  it("takes a free loopback port", async () => {
    const port = await freePort();
    expect(port).toBeGreaterThan(0);
    expect(port).toBeLessThan(65536);
  });
});
