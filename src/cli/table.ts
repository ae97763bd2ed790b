// Plain-text tables for the human output of the CLI: a header, then one line per row, columns padded to
// their widest cell. Cells come from Vercel and from files, so control characters are replaced: a sandbox
// name or an error message must not be able to move the cursor or recolour the operator's terminal.
import { printable } from "../preparation/diagnostics.js";

export interface Column<T> {
  header: string;
  cell: (row: T) => string;
}

export function formatTable<T>(columns: readonly Column<T>[], rows: readonly T[]): string {
  const grid = [columns.map((c) => c.header), ...rows.map((row) => columns.map((c) => printable(c.cell(row))))];
  const widths = columns.map((_, i) => Math.max(...grid.map((line) => (line[i] ?? "").length)));
  return grid
    .map((line) =>
      line
        .map((cell, i) => cell.padEnd(widths[i] ?? 0))
        .join("  ")
        .trimEnd(),
    )
    .join("\n");
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
