// The CLI's table formatter and durations: aligned columns, no trailing blanks, control characters defused.
import { describe, expect, it } from "vitest";
import { formatDuration, formatTable } from "../../src/cli/table.js";

describe("formatTable", () => {
  const columns = [
    { header: "NAME", cell: (r: { name: string; n: number }) => r.name },
    { header: "N", cell: (r: { name: string; n: number }) => String(r.n) },
  ];

  it("pads every column to its widest cell and trims line ends", () => {
    const text = formatTable(columns, [
      { name: "a", n: 1 },
      { name: "longer-name", n: 22 },
    ]);
    expect(text.split("\n")).toEqual(["NAME         N", "a            1", "longer-name  22"]);
  });

  it("prints only the header for no rows", () => {
    expect(formatTable(columns, [])).toBe("NAME  N");
  });

  it("replaces terminal control characters in cells, so data cannot drive the terminal", () => {
    const text = formatTable(columns, [{ name: "evil\u001b[2J\rname\u009b", n: 1 }]);
    const lines = text.split("\n");
    expect(lines).toHaveLength(2);
    expect(lines[1]).toBe("evil?[2J?name?  1");
  });

  it("prints a cell of two lines as two lines, the second indented in its column", () => {
    const text = formatTable(columns, [
      { name: "first line\nsecond", n: 1 },
      { name: "b", n: 2 },
    ]);
    expect(text.split("\n")).toEqual(["NAME        N", "first line  1", "  second", "b           2"]);
  });
});

describe("formatDuration", () => {
  it.each([
    [0, "0s"],
    [59_400, "59s"],
    [60_000, "1m"],
    [200_000, "3m 20s"],
    [3_600_000, "1h"],
    [5_400_000, "1h 30m"],
    [3 * 86_400_000, "3d"],
    [-5_000, "0s"],
  ])("%d ms reads %s", (ms, text) => {
    expect(formatDuration(ms)).toBe(text);
  });
});
