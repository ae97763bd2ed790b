// Plain-text output of the CLI: tables (a header, then one line per row, columns padded to their widest cell)
// and multi-line text. Cells come from Vercel, the gateway and files, so control characters are replaced: a
// sandbox name or an error message must not be able to move the cursor or recolour the operator's terminal.
// A line break is the one control character with a meaning we keep: the text goes on, on its own line,
// indented under where it started (JSON output keeps the "\n" in its strings).
import { printable } from "../preparation/index.js";

export interface Column<T> {
  header: string;
  cell: (row: T) => string;
}

/** Continuation lines of a table cell are indented this much within their column. */
const CELL_INDENT = "  ";

/** The printable lines of a text; every line after the first starts with `indent`. */
export function printableLines(text: string, indent: string): string[] {
  return text.split(/\r?\n/).map((line, i) => (i === 0 ? printable(line) : `${indent}${printable(line)}`));
}

/** A text of several lines as output: the first where it is placed, the others indented by `indent`. */
export function indented(text: string, indent: string): string {
  return printableLines(text, indent).join("\n");
}

export function formatTable<T>(columns: readonly Column<T>[], rows: readonly T[]): string {
  const grid = [
    columns.map((c) => [c.header]),
    ...rows.map((row) => columns.map((c) => printableLines(c.cell(row), CELL_INDENT))),
  ];
  const widths = columns.map((_, i) => Math.max(...grid.flatMap((line) => (line[i] ?? []).map((text) => text.length))));
  const out: string[] = [];
  for (const line of grid) {
    const height = Math.max(...line.map((cell) => cell.length));
    for (let k = 0; k < height; k += 1) {
      out.push(
        line
          .map((cell, i) => (cell[k] ?? "").padEnd(widths[i] ?? 0))
          .join("  ")
          .trimEnd(),
      );
    }
  }
  return out.join("\n");
}

/** "3m 20s ago"-style durations for the tables; JSON keeps the epoch milliseconds. */
export function formatDuration(ms: number): string {
  const s = Math.max(0, Math.round(ms / 1000));
  if (s < 60) return `${s}s`;
  const m = Math.floor(s / 60);
  if (m < 60) return s % 60 ? `${m}m ${s % 60}s` : `${m}m`;
  const h = Math.floor(m / 60);
  if (h < 48) return m % 60 ? `${h}h ${m % 60}m` : `${h}h`;
  return `${Math.floor(h / 24)}d`;
}
