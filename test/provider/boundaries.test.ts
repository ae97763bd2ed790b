// Acceptance: the provider room never loads the emulator. The embedded backend is the plugin entry's job,
// handed over through `embeddedBackend`, so a Vercel-backed gateway (and the published provider) carries none
// of it. The provider may use its sibling product rooms (warm-image preparation and the pure devcontainer
// engine), and they in turn reach nothing outside the provider, themselves and packages.
import { readdirSync, readFileSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const SRC = fileURLToPath(new URL("../../src/", import.meta.url));
const ROOMS = ["provider", "preparation", "devcontainer", "vercel", "infra", "settings"];

function specifiersOf(file: string): string[] {
  const source = readFileSync(join(SRC, file), "utf8");
  expect(source).not.toMatch(/\brequire\s*\(/);
  return [...source.matchAll(/(?:from|import)\s*\(?\s*["']([^"']+)["']/g)].map((match) => match[1]!);
}

const files = ROOMS.flatMap((room) =>
  readdirSync(join(SRC, room), { recursive: true, encoding: "utf8" })
    .filter((file) => file.endsWith(".ts"))
    .map((file) => join(room, file)),
);

describe("provider room boundaries", () => {
  it("reads imports, static and dynamic", () => {
    expect(specifiersOf("vercel/client.ts")).toEqual(expect.arrayContaining(["@vercel/sandbox", "./credentials.js"]));
    expect(files).toEqual(expect.arrayContaining(["provider/steps/warm-images.ts", "preparation/prepare.ts"]));
  });

  it.each(files)("%s imports nothing but packages and the provider's rooms", (file) => {
    for (const specifier of specifiersOf(file)) {
      expect(specifier, `${file} imports ${specifier}`).not.toMatch(/emulator/);
      if (!specifier.startsWith(".")) continue;
      const target = relative(SRC, resolve(dirname(join(SRC, file)), specifier));
      expect(ROOMS, `${file} imports ${specifier}`).toContain(target.split("/")[0]);
    }
  });
});
