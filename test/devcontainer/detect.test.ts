// Seed 002 "Built-in detection": the first matching root lockfile picks the installer; it never installs Node or Bun.
import { describe, expect, it } from "vitest";
import { type LifecycleCommand, resolveRecipe } from "../../src/devcontainer/index.js";

const corepack = (manager: string, install: string): LifecycleCommand => ({
  kind: "shell",
  command:
    'export COREPACK_ENABLE_DOWNLOAD_PROMPT=0 && mkdir -p "$HOME/.local/bin" && ' +
    `corepack enable --install-directory "$HOME/.local/bin" ${manager} && export PATH="$HOME/.local/bin":"$PATH" && ${install}`,
});
const PNPM = corepack("pnpm", "pnpm install --frozen-lockfile");
const BERRY = corepack("yarn", "yarn install --immutable");
const CLASSIC = corepack("yarn", "yarn install --frozen-lockfile");
const NPM: LifecycleCommand = { kind: "exec", argv: ["npm", "ci"] };
const BUN: LifecycleCommand = { kind: "exec", argv: ["bun", "install", "--frozen-lockfile"] };
const manifest = (packageManager?: unknown) => JSON.stringify({ name: "app", packageManager });

interface DetectionCase {
  name: string;
  files: Record<string, string>;
  bun?: boolean;
  file: string;
  install?: LifecycleCommand;
}

describe("built-in dependency detection", () => {
  it.each<DetectionCase>([
    {
      name: "pnpm-lock.yaml → Corepack shims, then a frozen-lockfile pnpm install",
      files: { "pnpm-lock.yaml": "" },
      file: "pnpm-lock.yaml",
      install: PNPM,
    },
    {
      name: "yarn.lock alone → Classic frozen-lockfile install",
      files: { "yarn.lock": "" },
      file: "yarn.lock",
      install: CLASSIC,
    },
    {
      name: "yarn.lock with a yarn 4 packageManager pin → Berry immutable install",
      files: { "yarn.lock": "", "package.json": manifest("yarn@4.1.0") },
      file: "yarn.lock",
      install: BERRY,
    },
    {
      name: "yarn.lock with .yarnrc.yml → Berry immutable install",
      files: { "yarn.lock": "", ".yarnrc.yml": "nodeLinker: node-modules\n" },
      file: "yarn.lock",
      install: BERRY,
    },
    {
      name: "a yarn 1 pin means Classic even beside .yarnrc.yml",
      files: { "yarn.lock": "", ".yarnrc.yml": "", "package.json": manifest("yarn@1.22.22+sha512.abc") },
      file: "yarn.lock",
      install: CLASSIC,
    },
    {
      name: "a pin for another manager does not decide yarn's variant",
      files: { "yarn.lock": "", "package.json": manifest("pnpm@9.0.0") },
      file: "yarn.lock",
      install: CLASSIC,
    },
    {
      name: "an unreadable package.json leaves yarn to .yarnrc.yml",
      files: { "yarn.lock": "", ".yarnrc.yml": "", "package.json": "{ nope" },
      file: "yarn.lock",
      install: BERRY,
    },
    {
      name: "package-lock.json → npm ci",
      files: { "package-lock.json": "{}" },
      file: "package-lock.json",
      install: NPM,
    },
    {
      name: "bun.lock with bun on PATH → frozen bun install",
      files: { "bun.lock": "{}" },
      bun: true,
      file: "bun.lock",
      install: BUN,
    },
    {
      name: "bun.lockb with bun on PATH → frozen bun install",
      files: { "bun.lockb": "\0" },
      bun: true,
      file: "bun.lockb",
      install: BUN,
    },
    {
      name: "bun.lock is preferred over bun.lockb",
      files: { "bun.lockb": "", "bun.lock": "" },
      bun: true,
      file: "bun.lock",
      install: BUN,
    },
    {
      name: "pnpm-lock.yaml comes first among all lockfiles",
      files: { "bun.lock": "", "package-lock.json": "", "yarn.lock": "", "pnpm-lock.yaml": "" },
      bun: true,
      file: "pnpm-lock.yaml",
      install: PNPM,
    },
    {
      name: "yarn.lock comes before package-lock.json and bun.lock",
      files: { "bun.lock": "", "package-lock.json": "", "yarn.lock": "" },
      bun: true,
      file: "yarn.lock",
      install: CLASSIC,
    },
    {
      name: "package-lock.json comes before bun.lock",
      files: { "bun.lock": "", "package-lock.json": "" },
      bun: true,
      file: "package-lock.json",
      install: NPM,
    },
  ])("$name", ({ files, bun, file, install }) => {
    const recipe = resolveRecipe({ files, hasCommand: (name) => bun === true && name === "bun" });
    expect(recipe).toMatchObject({ source: "detected", file, phases: { updateContentCommand: install }, notes: [] });
    expect(Object.keys(recipe.phases)).toEqual(["updateContentCommand"]);
    expect(recipe).toMatchObject({ env: {}, unset: [], ignored: [], ignoredNote: undefined });
  });

  it.each([
    ["bun is not on PATH", (name: string) => name === "node"],
    ["the machine's commands are unknown", undefined],
  ])("a bun lockfile is skipped with a note when %s, and nothing installs Bun", (_, hasCommand) => {
    const recipe = resolveRecipe({ files: { "bun.lock": "{}" }, hasCommand });
    expect(recipe).toMatchObject({ source: "detected", file: "bun.lock", phases: {} });
    expect(recipe.notes).toEqual([
      "bun.lock found but bun is not on PATH; dependency install skipped (Bun is never installed)",
    ]);
  });

  it("detected commands never install Node or Bun and never use sudo", () => {
    const lockfiles = ["pnpm-lock.yaml", "yarn.lock", "package-lock.json", "bun.lock"];
    for (const lockfile of lockfiles) {
      const recipe = resolveRecipe({ files: { [lockfile]: "", ".yarnrc.yml": "" }, hasCommand: () => true });
      const text = JSON.stringify(recipe.phases);
      expect(text).not.toMatch(/sudo|nvm|fnm|volta|bun\.sh|install node|setup-node|apt-get/i);
    }
  });

  it.each([
    ["no lockfile", { "package.json": manifest(), "src/index.js": "" }],
    ["a lockfile below the root only", { "packages/a/package-lock.json": "{}", "web/pnpm-lock.yaml": "" }],
    ["an unrecognised lockfile", { "deno.lock": "{}", "npm-shrinkwrap.json": "{}" }],
  ])("%s means no dependency setup", (_, files) => {
    const recipe = resolveRecipe({ files, hasCommand: () => true });
    expect(recipe).toMatchObject({ source: "none", file: undefined, phases: {}, notes: [] });
  });
});
