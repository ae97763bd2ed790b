// docs/benchmarks.md shows the bench's latest record, generated rather than pasted: the tables between its markers
// are exactly what scripts/bench-table.mjs makes of bench/results/latest.json (run it with --write after a bench).
// Reads files only; starts no process.
import { readFileSync } from "node:fs";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { beforeAll, describe, expect, it } from "vitest";
import { REPO_ROOT } from "../gateway/openclaw.js";

interface BenchTable {
  RECORD: string;
  PAGE: string;
  benchTable(record: unknown): string;
  tableIn(page: string): string;
  withTable(page: string, table: string): string;
  wrap(text: string, width?: number): string;
}

// A variable specifier: the script is plain JavaScript without declarations.
const SCRIPT = pathToFileURL(path.join(REPO_ROOT, "scripts", "bench-table.mjs")).href;

describe("docs/benchmarks.md", () => {
  let script: BenchTable;
  let record: { runs: number } & Record<string, unknown>;
  let page: string;
  beforeAll(async () => {
    script = (await import(SCRIPT)) as BenchTable;
    record = JSON.parse(readFileSync(script.RECORD, "utf8"));
    page = readFileSync(script.PAGE, "utf8");
  });

  it("holds the tables scripts/bench-table.mjs makes of bench/results/latest.json", () => {
    expect(script.RECORD).toBe(path.join(REPO_ROOT, "bench", "results", "latest.json"));
    expect(script.tableIn(page), "docs/benchmarks.md is out of date: run `node scripts/bench-table.mjs --write`").toBe(
      script.benchTable(record),
    );
    expect(script.tableIn(page)).toContain("**Round trips per operation**");
  });

  it("would differ from a record with another figure", () => {
    const other = { ...record, runs: record.runs + 1 };
    expect(script.benchTable(other)).not.toBe(script.tableIn(page));
    // Writing the other record's tables puts them, and only them, between the markers.
    const rewritten = script.withTable(page, script.benchTable(other));
    expect(script.tableIn(rewritten)).toBe(script.benchTable(other));
    expect(rewritten.slice(0, page.indexOf("<!--"))).toBe(page.slice(0, page.indexOf("<!--")));
  });

  it("wraps prose at 120 columns and keeps table rows whole", () => {
    const row = `| ${"x".repeat(150)} |`;
    const prose = Array.from({ length: 40 }, (_, i) => `word${i}`).join(" ");
    const wrapped = script.wrap(`${prose}\n${row}`, 120).split("\n");
    expect(wrapped.at(-1)).toBe(row);
    expect(wrapped.slice(0, -1).every((line) => line.length <= 120)).toBe(true);
    expect(wrapped.slice(0, -1).join(" ")).toBe(prose);
    // A wrapped line never starts with what would read as a list item.
    expect(
      script
        .wrap(`${"a ".repeat(59)}b - c`, 120)
        .split("\n")[1]
        ?.startsWith("-"),
    ).toBe(false);
  });
});
