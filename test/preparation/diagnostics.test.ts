// Preparation diagnostics (seed 002): substitution stays literal and is warned about, failure output is cut to
// 16 KiB without splitting a character, and the `images` table shows each preparation at a glance.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { resolveRecipe } from "../../src/devcontainer/index.js";
import { capTail, formatDiagnosticsTable, substitutionWarnings } from "../../src/preparation/diagnostics.js";
import type { PreparationDiagnostics } from "../../src/preparation/types.js";

const recipeOf = (config: object) =>
  resolveRecipe({ files: { ".devcontainer/devcontainer.json": JSON.stringify(config) } });
/** A devcontainer variable reference such as `${localEnv:HOME}`, spelled so it is plainly not a template. */
const ref = (name: string) => `\${${name}}`;
const LITERAL = "variable substitution is outside the supported devcontainer subset, so it stays literal";

describe("substitutionWarnings", () => {
  it("warns once per environment value holding a variable reference, naming the variable and what it contains", () => {
    const recipe = recipeOf({
      containerEnv: { PATH: `${ref("containerEnv:PATH")}:/x`, PLAIN: "/opt/tool" },
      remoteEnv: {
        BOTH: `${ref("localEnv:HOME")}/a:${ref("localEnv:HOME")}/b:${ref("containerWorkspaceFolder")}`,
        NODE_ENV: "dev",
      },
    });
    expect(substitutionWarnings(recipe)).toEqual([
      `environment variable BOTH contains \${localEnv:HOME}, \${containerWorkspaceFolder}: ${LITERAL}`,
      `environment variable PATH contains \${containerEnv:PATH}: ${LITERAL}`,
    ]);
  });

  it("in a shell command only devcontainer variables are warned about; the shell expands its own", () => {
    const recipe = recipeOf({
      onCreateCommand: `echo "${ref("HOME")} ${ref("NAME:-default")} $PATH"`,
      postCreateCommand: `cd ${ref("containerWorkspaceFolder")} && npm run build`,
      postStartCommand: `echo ${ref("devcontainerId")} ${ref("localWorkspaceFolderBasename")}`,
    });
    expect(substitutionWarnings(recipe)).toEqual([
      `postCreateCommand contains \${containerWorkspaceFolder}: ${LITERAL}`,
      `postStartCommand contains \${devcontainerId}, \${localWorkspaceFolderBasename}: ${LITERAL}`,
    ]);
  });

  it("in an exec argument any reference stays literal, since no shell runs; the element is named", () => {
    const recipe = recipeOf({
      updateContentCommand: ["npm", "ci", "--prefix", `${ref("HOME")}/x`],
      postCreateCommand: { build: ["make", ref("containerEnv:TARGET")], serve: `echo ${ref("HOME")}` },
    });
    expect(substitutionWarnings(recipe)).toEqual([
      `updateContentCommand[3] contains \${HOME}: ${LITERAL}`,
      `postCreateCommand.build[1] contains \${containerEnv:TARGET}: ${LITERAL}`,
    ]);
  });

  it("a recipe with no substitution has no warnings", () => {
    const recipe = recipeOf({ updateContentCommand: ["npm", "ci"], remoteEnv: { A: "$HOME", B: "{x}" } });
    expect(substitutionWarnings(recipe)).toEqual([]);
  });
});

describe("capTail", () => {
  it("returns text within the budget unchanged", () => {
    expect(capTail("héllo ✓", 10)).toBe("héllo ✓");
    expect(capTail("", 0)).toBe("");
  });

  it("keeps the end, says how many bytes were dropped, and fits the budget exactly or under", () => {
    const text = Array.from({ length: 2000 }, (_, i) => `line ${i}\n`).join("");
    const tail = capTail(text, 16 * 1024);
    const [marker, dropped] = /^\[… (\d+) earlier bytes omitted\]\n/.exec(tail) ?? [];
    expect(marker).toBeDefined();
    const kept = tail.slice(marker!.length);
    expect(text.endsWith(kept)).toBe(true);
    expect(Number(dropped) + Buffer.byteLength(kept)).toBe(Buffer.byteLength(text));
    expect(Buffer.byteLength(tail)).toBeLessThanOrEqual(16 * 1024);
    expect(Buffer.byteLength(tail)).toBeGreaterThan(16 * 1024 - 8);
  });

  it("never splits a character and never passes the budget, whatever the text and budget", () => {
    // U+FFFD is what a split character decodes to, so the input never holds one of its own.
    const texts = fc.string({ unit: "grapheme", maxLength: 400 }).filter((text) => !text.includes("\uFFFD"));
    fc.assert(
      fc.property(texts, fc.nat(600), (text, maxBytes) => {
        const tail = capTail(text, maxBytes);
        expect(Buffer.byteLength(tail)).toBeLessThanOrEqual(maxBytes);
        expect(tail).not.toContain("\uFFFD");
        expect(text.endsWith(tail.replace(/^\[… \d+ earlier bytes omitted\]\n/, ""))).toBe(true);
      }),
      { numRuns: 2000 },
    );
  });

  it("a budget too small for the marker keeps only the last whole characters", () => {
    expect(capTail("abc✓✓", 7)).toBe("c✓✓");
    expect(capTail("abc✓✓", 5)).toBe("✓");
  });
});

const failedCold: PreparationDiagnostics = {
  leaseId: "lease-a",
  at: Date.UTC(2026, 10, 30, 9, 5, 7, 450),
  key: "k1",
  projectKey: "p1",
  baseCommit: "abc123",
  recipe: {
    source: "devcontainer",
    file: ".devcontainer/devcontainer.json",
    identity: "id1",
    ignoredNote: "devcontainer image ignored on cloud machines",
    notes: [],
    warnings: [`environment variable PATH contains ${ref("containerEnv:PATH")}: it stays literal`],
  },
  start: "cold",
  event: "initial",
  phases: [
    { phase: "onCreateCommand", ms: 1234, ok: true },
    { phase: "updateContentCommand", ms: 125_400, ok: false, failed: "npm ci", exitCode: 1 },
  ],
  failure: {
    phase: "updateContentCommand",
    reason: "updateContentCommand failed: `npm ci` exited with code 1",
    outputTail: "npm ERR! big output",
  },
  captured: false,
  captureSkipped: "preparation failed",
  totalMs: 127_000,
};

const warmOk: PreparationDiagnostics = {
  leaseId: "lease-b",
  at: Date.UTC(2026, 10, 30, 9, 6, 0),
  key: "k1",
  projectKey: "p1",
  baseCommit: "abc123",
  recipe: { source: "none", identity: "id0", notes: [], warnings: [] },
  start: "warm",
  event: "unchanged",
  phases: [],
  imageId: "snap_123",
  captured: false,
  totalMs: 420,
};

describe("formatDiagnosticsTable", () => {
  it("shows recipe, start, image, phases with durations and the result, one aligned row each", () => {
    expect(formatDiagnosticsTable([failedCold, warmOk, { ...warmOk, leaseId: "lease-c", captured: true }])).toBe(
      [
        "WHEN                  LEASE    RECIPE                                        START  IMAGE     PHASES                                              TOTAL  RESULT",
        "2026-11-30 09:05:07Z  lease-a  devcontainer .devcontainer/devcontainer.json  cold   -         onCreate 1.2s, updateContent 2m05s failed (npm ci)  2m07s  failed (updateContentCommand)",
        "  note: devcontainer image ignored on cloud machines",
        `  warning: environment variable PATH contains ${ref("containerEnv:PATH")}: it stays literal`,
        "  failure: updateContentCommand failed: `npm ci` exited with code 1",
        "  not captured: preparation failed",
        "2026-11-30 09:06:00Z  lease-b  none                                          warm   snap_123  -                                                   420ms  ok",
        "2026-11-30 09:06:00Z  lease-c  none                                          warm   snap_123  -                                                   420ms  ok, captured",
      ].join("\n"),
    );
  });

  it("says so when there is nothing to show", () => {
    expect(formatDiagnosticsTable([])).toBe("No preparations recorded.");
  });

  it("repository text cannot move the terminal: control characters are replaced", () => {
    const hostile = {
      ...warmOk,
      recipe: { ...warmOk.recipe, notes: ["bad\u001b[2J\nnote\r"] },
      phases: [{ phase: "postCreateCommand" as const, ms: 5, ok: false, failed: "a\u0007b" }],
    };
    const table = formatDiagnosticsTable([hostile]);
    expect(table).not.toMatch(/[\u0000-\u0009\u000b-\u001f\u007f-\u009f]/);
    expect(table.split("\n")).toHaveLength(3);
    expect(table).toContain("  note: bad?[2J?note?");
    expect(table).toContain("postCreate 5ms failed (a?b)");
  });
});
