// Acceptance: src/devcontainer is the pure half: no I/O modules, nothing from Vercel or OpenClaw, and a door
// (index.ts) that exports only the public API.
import { readdirSync, readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import * as door from "../../src/devcontainer/index.js";

const ROOM = fileURLToPath(new URL("../../src/devcontainer/", import.meta.url));
// Hashing is computation, not I/O; jsonc-parser is a pure parser.
const ALLOWED = new Set(["jsonc-parser", "node:crypto"]);

function importsOf(file: string): string[] {
  const source = readFileSync(`${ROOM}${file}`, "utf8");
  const specifiers = [...source.matchAll(/(?:from|import)\s*\(?\s*["']([^"']+)["']/g)].map((match) => match[1]!);
  expect(source).not.toMatch(/\brequire\s*\(/);
  return specifiers;
}

describe("room boundaries", () => {
  const files = readdirSync(ROOM).filter((file) => file.endsWith(".ts"));

  it.each(files)("%s imports only sibling files, jsonc-parser and node:crypto", (file) => {
    for (const specifier of importsOf(file)) {
      if (specifier.startsWith("./")) continue;
      expect(ALLOWED, `${file} imports ${specifier}`).toContain(specifier);
    }
  });

  it("the door exports exactly resolveRecipe, planPhases and RecipeError at run time", () => {
    expect(Object.keys(door).sort()).toEqual(["RecipeError", "planPhases", "resolveRecipe"]);
  });
});
