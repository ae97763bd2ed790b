// The slowest spec files at the end of a CI run: the durations reporter writes each file's wall seconds to the file
// VSB_TEST_DURATIONS names, and scripts/slowest-files.mjs prints the slowest of them with the totals.
import { execFileSync } from "node:child_process";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { REPO_ROOT } from "../gateway/openclaw.js";
import { busySeconds, type Durations } from "./durations-reporter.js";
import { runProbe } from "./probe-run.js";

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(path.join(tmpdir(), "vsb-probe-"));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

function slowestFiles(json: string): string {
  return execFileSync(process.execPath, [path.join(REPO_ROOT, "scripts/slowest-files.mjs"), json], {
    encoding: "utf8",
  });
}

interface Row {
  seconds: number;
  text: string;
  /** Where the text starts: the same on every row of an aligned table. */
  column: number;
}

/** How the line of the machine's busy CPU starts (it is not a row of files). */
const MACHINE_LINE = "The machine was busy";

function rowsOf(table: string): Row[] {
  return table
    .trimEnd()
    .split("\n")
    .slice(1)
    .filter((line) => !line.startsWith(MACHINE_LINE))
    .map((line) => {
      const m = line.match(/^( *)(\d+\.\d) s {2}(\S.*)$/);
      expect(m, line).not.toBeNull();
      return { seconds: Number(m![2]), text: m![3]!, column: line.indexOf(m![3]!) };
    });
}

describe("the table of the slowest files", () => {
  it("names the 15 slowest in order with their seconds, then the sum of all files and the run's seconds", async () => {
    // 17 files in no particular order, from a few tenths of a second to several hundred seconds.
    const seconds = Array.from({ length: 17 }, (_, i) => Math.round(((i * 7919) % 1009) * 10 + i) / 10);
    const files = Object.fromEntries(seconds.map((s, i) => [`test/part-${String.fromCharCode(97 + i)}.test.ts`, s]));
    const json = path.join(dir, "durations.json");
    await writeFile(json, JSON.stringify({ wallSeconds: 1234.5, reason: "passed", files }));

    const table = slowestFiles(json);
    const rows = rowsOf(table);
    const byTime = Object.entries(files).sort(([, a], [, b]) => b - a);
    expect(rows).toHaveLength(17);
    expect(rows.slice(0, 15).map((r) => [r.text, r.seconds])).toEqual(byTime.slice(0, 15));
    // The 16th and 17th slowest are not in the table.
    for (const [file] of byTime.slice(15)) expect(table).not.toContain(file);
    const sum = seconds.reduce((a, b) => a + b, 0);
    expect(rows[15]!.text).toMatch(/\b17 files\b/);
    expect(rows[15]!.seconds).toBeCloseTo(sum, 1);
    expect(rows[16]!.text).toMatch(/\brun\b/);
    expect(rows[16]!.seconds).toBe(1234.5);
    expect(new Set(rows.map((r) => r.column)).size).toBe(1);
    expect(table.split("\n")[0]).toMatch(/15 slowest of 17/);
  });

  it("lists them all, fewer than 15, and says when the run did not pass", async () => {
    const json = path.join(dir, "durations.json");
    await writeFile(
      json,
      JSON.stringify({ wallSeconds: 9, reason: "failed", files: { "test/b.test.ts": 2, "test/a.test.ts": 5.25 } }),
    );
    const rows = rowsOf(slowestFiles(json));
    expect(rows.map((r) => r.text)).toEqual([
      "test/a.test.ts",
      "test/b.test.ts",
      "all 2 files together",
      expect.any(String),
    ]);
    expect(rows.map((r) => r.seconds)).toEqual([5.3, 2, 7.3, 9]);
    expect(rows[3]!.text).toContain("failed");
  });
});

describe("the machine's busy CPU", () => {
  it("is user, nice, system, irq, softirq and steal of /proc/stat's cpu line, not idle or iowait", () => {
    const stat = "cpu  1000 20 300 90000 4000 5 6 7 50 0\ncpu0 500 10 150 45000 2000 2 3 3 25 0\nintr 1 2\n";
    expect(busySeconds(stat)).toBeCloseTo((1000 + 20 + 300 + 5 + 6 + 7) / 100, 5);
    expect(busySeconds("intr 1 2\n")).toBeUndefined();
  });

  it("the table says how busy the machine was against its cores, and how much of it the files' own CPU does not hold", async () => {
    const json = path.join(dir, "durations.json");
    await writeFile(
      json,
      JSON.stringify({
        wallSeconds: 100,
        reason: "passed",
        files: { "test/a.test.ts": 90, "test/b.test.ts": 40 },
        cpu: { "test/a.test.ts": 60, "test/b.test.ts": 20 },
        machine: { cpuSeconds: 150, cores: 2 },
      }),
    );
    const table = slowestFiles(json);
    expect(table.trimEnd().split("\n").at(-1)).toBe(
      "The machine was busy 150.0 CPU-s of the 200.0 its 2 cores had (75 %); 70.0 s outside the files' own",
    );
    expect(rowsOf(table).map((r) => r.text)).toEqual([
      "60.0 s CPU  test/a.test.ts",
      "20.0 s CPU  test/b.test.ts",
      "80.0 s CPU  all 2 files together",
      "the run, start to end",
    ]);
  });
});

describe("the durations reporter", () => {
  it("writes each spec file's wall seconds, its hooks included, and the run's", { timeout: 150_000 }, async () => {
    const json = path.join(dir, "out", "durations.json");
    const { code, output } = await runProbe("test/setup/fixtures/durations/durations.config.ts", {
      VSB_TEST_DURATIONS: json,
      PROBE_SLOW_MS: "1500",
    });
    expect(code, output).toBe(0);
    const durations = JSON.parse(await readFile(json, "utf8")) as Durations;
    const slow = "test/setup/fixtures/durations/slow.probe.ts";
    const quick = "test/setup/fixtures/durations/quick.probe.ts";
    expect(Object.keys(durations.files).sort()).toEqual([quick, slow]);
    // The test and the hook of slow.probe.ts each take 1.5 s.
    expect(durations.files[slow]).toBeGreaterThanOrEqual(3);
    expect(durations.files[quick]).toBeLessThan(durations.files[slow]! - 2.5);
    expect(durations.wallSeconds).toBeGreaterThanOrEqual(durations.files[slow]!);
    expect(durations.reason).toBe("passed");
    // The machine's busy CPU over the run: the probe's own vitest processes alone cost some.
    expect(durations.machine?.cores).toBeGreaterThanOrEqual(1);
    expect(durations.machine?.cpuSeconds).toBeGreaterThan(0);
    // And the table reads it: the slow file first.
    expect(rowsOf(slowestFiles(json))[0]!.text).toBe(slow);
  });
});
