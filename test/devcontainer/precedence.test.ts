// Seed 002 "Recipe precedence": one recipe per commit, first match wins, no silent fallback.
import { describe, expect, it } from "vitest";
import { resolveRecipe } from "../../src/devcontainer/index.js";
import { DEVCONTAINER, ROOT_DEVCONTAINER, recipeErrorOf, SCRIPT } from "./support.js";

const dc = (command: string) => JSON.stringify({ updateContentCommand: command });
const script = "#!/bin/sh\nnpm ci\n";

interface PrecedenceCase {
  name: string;
  files: Record<string, string>;
  source: string;
  file?: string;
}

describe("recipe precedence", () => {
  it.each<PrecedenceCase>([
    {
      name: ".devcontainer/devcontainer.json wins over every other recipe",
      files: { [DEVCONTAINER]: dc("a"), [ROOT_DEVCONTAINER]: dc("b"), [SCRIPT]: script, "package-lock.json": "{}" },
      source: "devcontainer",
      file: DEVCONTAINER,
    },
    {
      name: ".devcontainer.json wins over the script and detection",
      files: { [ROOT_DEVCONTAINER]: dc("b"), [SCRIPT]: script, "package-lock.json": "{}" },
      source: "devcontainer",
      file: ROOT_DEVCONTAINER,
    },
    {
      name: "the executable fallback script wins over detection",
      files: { [SCRIPT]: script, "package-lock.json": "{}" },
      source: "script",
      file: SCRIPT,
    },
    {
      name: "detection applies when there is neither a devcontainer file nor an executable script",
      files: { "package-lock.json": "{}" },
      source: "detected",
      file: "package-lock.json",
    },
    { name: "no recipe file and no lockfile means no setup", files: { "README.md": "hi" }, source: "none" },
    { name: "an empty repository means no setup", files: {}, source: "none" },
  ])("$name", ({ files, source, file }) => {
    const recipe = resolveRecipe({ files, executables: [SCRIPT] });
    expect(recipe.source).toBe(source);
    expect(recipe.file).toBe(file);
  });

  it("a non-executable fallback script does not count, so detection applies", () => {
    const recipe = resolveRecipe({ files: { [SCRIPT]: script, "package-lock.json": "{}" }, executables: [] });
    expect(recipe.source).toBe("detected");
    expect(resolveRecipe({ files: { [SCRIPT]: script } }).source).toBe("none");
  });

  it("the executable bit without a committed script file does not count", () => {
    expect(resolveRecipe({ files: {}, executables: [SCRIPT] }).source).toBe("none");
  });

  it("the fallback script runs as an executable path, not through a shell, in the update phase", () => {
    const recipe = resolveRecipe({ files: { [SCRIPT]: script }, executables: [SCRIPT] });
    expect(recipe.phases).toEqual({ updateContentCommand: { kind: "exec", argv: [`./${SCRIPT}`] } });
  });

  it.each([
    ["an empty object", "{}"],
    ["only a name", '{ "name": "tools" }'],
    ["only ignored properties", '{ "image": "node:24" }'],
    ["only environment", '{ "remoteEnv": { "A": "1" } }'],
  ])("a devcontainer file with %s still wins: neither the script nor the installer runs", (_, text) => {
    const recipe = resolveRecipe({
      files: { [DEVCONTAINER]: text, [SCRIPT]: script, "pnpm-lock.yaml": "lockfileVersion: 9" },
      executables: [SCRIPT],
    });
    expect(recipe.source).toBe("devcontainer");
    expect(recipe.phases).toEqual({});
    expect(recipe.notes).toEqual([
      `${DEVCONTAINER} declares no lifecycle commands; the fallback script and detected installer do not run`,
    ]);
  });

  it.each([
    ["a syntax error", "{ postCreateCommand: }"],
    ["a wrong command type", '{ "postCreateCommand": 42 }'],
    ["a root that is not an object", "[]"],
  ])("an invalid devcontainer file with %s is an error, never a fallback to the script or installer", (_, text) => {
    const error = recipeErrorOf(() =>
      resolveRecipe({
        files: { [DEVCONTAINER]: text, [SCRIPT]: script, "package-lock.json": "{}" },
        executables: [SCRIPT],
      }),
    );
    expect(error.file).toBe(DEVCONTAINER);
  });

  it("an invalid .devcontainer.json is an error even when .devcontainer/ holds nothing", () => {
    const error = recipeErrorOf(() =>
      resolveRecipe({ files: { [ROOT_DEVCONTAINER]: "{,}", "package-lock.json": "{}" } }),
    );
    expect(error.file).toBe(ROOT_DEVCONTAINER);
  });

  it("a devcontainer file under another path (e.g. .devcontainer/node/devcontainer.json) is not a recipe", () => {
    const recipe = resolveRecipe({ files: { ".devcontainer/node/devcontainer.json": dc("x") } });
    expect(recipe.source).toBe("none");
  });

  it("skipping setup ignores every recipe, even an invalid one, and runs nothing", () => {
    const recipe = resolveRecipe({
      files: { [DEVCONTAINER]: "{ not json", [SCRIPT]: script, "package-lock.json": "{}" },
      executables: [SCRIPT],
      skipSetup: true,
    });
    expect(recipe).toMatchObject({ source: "none", file: undefined, phases: {}, env: {}, unset: [], ignored: [] });
    expect(recipe.notes).toEqual(["setup skipped explicitly; no repository command runs"]);
  });
});
