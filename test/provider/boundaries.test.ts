// Acceptance: the provider room never loads the emulator. The embedded backend is the plugin entry's job,
// handed over through `embeddedBackend`, so a Vercel-backed gateway (and the published provider) carries none
// of it.
import { readdirSync, readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const ROOM = fileURLToPath(new URL("../../src/provider/", import.meta.url));

function specifiersOf(file: string): string[] {
  const source = readFileSync(`${ROOM}${file}`, "utf8");
  expect(source).not.toMatch(/\brequire\s*\(/);
  return [...source.matchAll(/(?:from|import)\s*\(?\s*["']([^"']+)["']/g)].map((match) => match[1]!);
}

describe("provider room boundaries", () => {
  const files = readdirSync(ROOM).filter((file) => file.endsWith(".ts"));

  it("reads imports, static and dynamic", () => {
    expect(specifiersOf("client.ts")).toEqual(expect.arrayContaining(["@vercel/sandbox", "./credentials.js"]));
  });

  it.each(files)("%s imports nothing outside the room but packages", (file) => {
    for (const specifier of specifiersOf(file)) {
      expect(specifier, `${file} imports ${specifier}`).not.toMatch(/^\.\.\//);
      expect(specifier, `${file} imports ${specifier}`).not.toMatch(/emulator/);
    }
  });
});
