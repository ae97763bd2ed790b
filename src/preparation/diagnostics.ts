// Pure helpers for preparation diagnostics: warnings about text that looks like devcontainer variable
// substitution (outside the seed 002 subset, so it stays literal), the 16 KiB output tail, and the table
// `openclaw vercel-sandbox images` prints.
import type { LifecycleCommand, PhaseName, Recipe, SingleCommand } from "../devcontainer/index.js";
import type { PhaseReport, PreparationDiagnostics } from "./types.js";

/** Failure output kept per preparation (seed 002: "failure output limited to 16 KiB"). */
export const OUTPUT_TAIL_BYTES = 16 * 1024;

// Without a shell nothing expands, so any `${…}` stays those exact characters.
const ANY_SUBSTITUTION = /\$\{[^}]*\}/g;
// A shell expands its own `${HOME}` or `${X:-default}` correctly; only the devcontainer forms stay literal there.
const DEVCONTAINER_SUBSTITUTION =
  /\$\{(?:(?:localEnv|containerEnv|env):[^}]*|localWorkspaceFolder|containerWorkspaceFolder|localWorkspaceFolderBasename|containerWorkspaceFolderBasename|devcontainerId)\}/g;

/**
 * One warning per environment value or command text holding variable substitution that will not happen, so
 * a file written for the full specification (`"PATH": "${containerEnv:PATH}:/x"`) does not break silently.
 */
export function substitutionWarnings(recipe: Pick<Recipe, "env" | "phases">): string[] {
  const warnings: string[] = [];
  const check = (property: string, text: string, pattern: RegExp) => {
    const found = [...new Set(text.match(pattern) ?? [])];
    if (found.length === 0) return;
    warnings.push(
      `${property} contains ${found.join(", ")}: variable substitution is outside the supported devcontainer subset, so it stays literal`,
    );
  };
  for (const [name, value] of Object.entries(recipe.env))
    check(`environment variable ${name}`, value, ANY_SUBSTITUTION);
  for (const [phase, command] of Object.entries(recipe.phases) as [PhaseName, LifecycleCommand][]) {
    const singles: [string, SingleCommand][] =
      command.kind === "parallel"
        ? Object.entries(command.commands).map(([name, single]) => [`${phase}.${name}`, single])
        : [[phase, command]];
    for (const [property, single] of singles) {
      if (single.kind === "shell") check(property, single.command, DEVCONTAINER_SUBSTITUTION);
      else
        for (const [index, argument] of single.argv.entries())
          check(`${property}[${index}]`, argument, ANY_SUBSTITUTION);
    }
  }
  return warnings;
}

/**
 * The end of `text` in at most `maxBytes` UTF-8 bytes, never splitting a character. When text is dropped,
 * a marker saying how much replaces the start, inside the same budget.
 */
export function capTail(text: string, maxBytes: number = OUTPUT_TAIL_BYTES): string {
  const bytes = Buffer.from(text, "utf8");
  if (bytes.length <= maxBytes) return text;
  // The count in the marker never has more digits than the whole length, so this bounds the marker.
  const markerBytes = Buffer.byteLength(omitted(bytes.length));
  if (maxBytes < markerBytes) return bytes.subarray(characterStart(bytes, bytes.length - maxBytes)).toString("utf8");
  const start = characterStart(bytes, bytes.length - (maxBytes - markerBytes));
  return `${omitted(start)}${bytes.subarray(start).toString("utf8")}`;
}

const omitted = (count: number) => `[… ${count} earlier bytes omitted]\n`;

// Steps past UTF-8 continuation bytes (10xxxxxx) so the tail starts on a whole character.
function characterStart(bytes: Buffer, from: number): number {
  let start = from;
  while (start < bytes.length && (bytes[start]! & 0xc0) === 0x80) start += 1;
  return start;
}

const COLUMNS = ["WHEN", "LEASE", "RECIPE", "START", "IMAGE", "PHASES", "TOTAL", "RESULT"] as const;

/** Preparations as an aligned table, one row each, with notes, warnings and failures indented below. */
export function formatDiagnosticsTable(entries: readonly PreparationDiagnostics[]): string {
  if (entries.length === 0) return "No preparations recorded.";
  const rows = entries.map(rowOf);
  const widths = COLUMNS.map((title, column) =>
    Math.max(title.length, ...rows.map(({ cells }) => cells[column]!.length)),
  );
  const line = (cells: readonly string[]) =>
    cells
      .map((cell, column) => cell.padEnd(widths[column]!))
      .join("  ")
      .trimEnd();
  const out = [line(COLUMNS)];
  for (const { cells, details } of rows) {
    out.push(line(cells), ...details.map((detail) => `  ${detail}`));
  }
  return out.join("\n");
}

function rowOf(entry: PreparationDiagnostics): { cells: string[]; details: string[] } {
  const { recipe, failure } = entry;
  const cells = [
    new Date(entry.at)
      .toISOString()
      .replace("T", " ")
      .replace(/\.\d+Z$/, "Z"),
    entry.leaseId,
    recipe.file ? `${recipe.source} ${recipe.file}` : recipe.source,
    entry.start,
    entry.imageId ?? "-",
    entry.phases.length === 0 ? "-" : entry.phases.map(phaseCell).join(", "),
    duration(entry.totalMs),
    failure ? `failed (${failure.phase})` : entry.captured ? "ok, captured" : "ok",
  ].map(printable);
  const details = [
    ...(recipe.ignoredNote ? [`note: ${recipe.ignoredNote}`] : []),
    ...recipe.notes.map((note) => `note: ${note}`),
    ...recipe.warnings.map((warning) => `warning: ${warning}`),
    ...(failure ? [`failure: ${failure.reason}`] : []),
    ...(entry.captureSkipped ? [`not captured: ${entry.captureSkipped}`] : []),
  ].map(printable);
  return { cells, details };
}

function phaseCell(report: PhaseReport): string {
  const name = report.phase.replace(/Command$/, "");
  return `${name} ${duration(report.ms)}${report.ok ? "" : ` failed${report.failed ? ` (${report.failed})` : ""}`}`;
}

function duration(ms: number): string {
  if (ms < 1000) return `${Math.round(ms)}ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(1)}s`;
  const seconds = Math.round(ms / 1000);
  return `${Math.floor(seconds / 60)}m${String(seconds % 60).padStart(2, "0")}s`;
}

// Recipe files and command labels come from repositories (and table cells from Vercel and files): control
// characters must not reach a terminal, where they could move the cursor or recolour it.
export function printable(text: string): string {
  return text.replace(/[\u0000-\u001f\u007f-\u009f]/g, "?");
}
