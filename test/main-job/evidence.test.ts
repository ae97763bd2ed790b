// The secret scan the job runs on VM1, run here on a local tree: it names the files holding a secret, skips
// node_modules, and takes the secrets from its environment only.
import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { SECRET_SCAN } from "../../src/main-job/evidence.js";

let dir = "";
afterEach(() => rmSync(dir, { recursive: true, force: true }));

describe("the secret scan", () => {
  it("names every file holding a secret outside node_modules, and none other", () => {
    dir = mkdtempSync(path.join(tmpdir(), "vsb-scan-"));
    mkdirSync(path.join(dir, "state", "deep"), { recursive: true });
    mkdirSync(path.join(dir, "node_modules", "x"), { recursive: true });
    writeFileSync(path.join(dir, "state", "openclaw.json"), '{"gateway":{"auth":{"mode":"token"}}}');
    writeFileSync(path.join(dir, "state", "deep", "leak.log"), "token=abc123secretvalue!");
    writeFileSync(path.join(dir, "node_modules", "x", "ignored.js"), "abc123secretvalue");
    const out = execFileSync(process.execPath, ["-e", SECRET_SCAN, dir], {
      env: { S1: "abc123secretvalue", S2: "another-secret-value" },
      encoding: "utf8",
    });
    expect(JSON.parse(out)).toEqual([path.join(dir, "state", "deep", "leak.log")]);
  });
});
