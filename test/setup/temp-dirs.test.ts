// The temp-dir check itself: its prefix list names every mkdtemp prefix in src/, test/ and bench/, and a vitest
// run that leaves an entry of ours fails (exit code 1) naming it, while third-party entries are only removed.
import { readdirSync, readFileSync } from "node:fs";
import { mkdtemp, readdir, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { REPO_ROOT } from "../gateway/openclaw.js";
import { runProbe } from "./probe-run.js";
import { isOurs, newEntriesOfOurs } from "./temp-dirs.js";

function sources(dir: string): string[] {
  return readdirSync(path.join(REPO_ROOT, dir), { withFileTypes: true, recursive: true })
    .filter((e) => e.isFile() && /\.(ts|mts|mjs|js)$/.test(e.name) && !e.parentPath.includes("node_modules"))
    .map((e) => path.join(e.parentPath, e.name));
}

/** Literal name starts given to temp dirs by mkdtemp in tmpdir(), tempStateDirs and createOwnedTempDir. */
function tempPrefixesIn(text: string): string[] {
  const found = [
    ...[...text.matchAll(/mkdtemp(?:Sync)?\(\s*(?:path\.)?join\(\s*(?:os\.)?tmpdir\(\),\s*["'`]([^"'`$]+)/g)].map(
      (m) => m[1]!,
    ),
    ...[...text.matchAll(/tempStateDirs\(\s*["']([^"']+)["']/g)].map((m) => `${m[1]}-`),
    ...[...text.matchAll(/createOwnedTempDir\(\s*["']([^"']+)["']/g)].map((m) => m[1]!),
  ];
  return found;
}

describe("the temp prefixes", () => {
  it("name every temp dir prefix our code gives", () => {
    const files = ["src", "test", "bench", "scripts"].flatMap(sources);
    const prefixes = files.flatMap((file) =>
      tempPrefixesIn(readFileSync(file, "utf8")).map((prefix) => ({ file: path.relative(REPO_ROOT, file), prefix })),
    );
    // The scan found the ones known to exist, so an empty list of misses means something.
    expect(prefixes.map((p) => p.prefix)).toEqual(expect.arrayContaining(["vsb-repo-", "process-guard-", "ledger-"]));
    expect(prefixes.filter((p) => !isOurs(p.prefix))).toEqual([]);
  });

  it("new entries of ours are those absent before, whatever else appeared", () => {
    expect(newEntriesOfOurs(["vsb-repo-a", "x"], ["vsb-repo-a", "vsb-repo-b", "x", "y", "ocgw-test-1"])).toEqual([
      "ocgw-test-1",
      "vsb-repo-b",
    ]);
  });
});

describe("a vitest run under the temp check", () => {
  // The probe run gets a system temp dir of its own: in this run's shared TMPDIR, other spec files make and remove
  // their entries while the probe runs, and the probe's check would count them as its own.
  let systemTmp: string;
  beforeEach(async () => {
    systemTmp = await mkdtemp(path.join(tmpdir(), "vsb-probe-"));
  });
  afterEach(async () => {
    await rm(systemTmp, { recursive: true, force: true });
  });

  const probe = (leave: string) =>
    runProbe("test/setup/fixtures/probe.config.ts", { TMPDIR: systemTmp, PROBE_LEAVE: leave });

  it("fails, naming what it left, and removes its own TMPDIR", { timeout: 150_000 }, async () => {
    const { code, output } = await probe("vsb-repo-,someone-else-");
    expect(code).toBe(1);
    expect(output).toMatch(/TempLeftoversError: the test run left 1 temp entry behind .*vsb-vitest-\d+-\w+\/vsb-repo-/);
    expect(output).toContain("removed third-party temp entries of this run: someone-else-");
    // Its run dir, and what was in it, are gone: the system temp dir it was given is as empty as it was made.
    expect(await readdir(systemTmp)).toEqual([]);
  });

  it("passes when it leaves nothing of ours", { timeout: 150_000 }, async () => {
    const { code, output } = await probe("");
    expect(output).not.toContain("TempLeftoversError");
    expect(code).toBe(0);
    expect(await readdir(systemTmp)).toEqual([]);
  });
});
