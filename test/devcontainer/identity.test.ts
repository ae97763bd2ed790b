// Seed 002: recipe identity comes from the devcontainer blob, the script blob, or the built-in recipe version
// plus the detected lockfile blob; skipping setup has its own identity.
import { describe, expect, it } from "vitest";
import { gitBlobId } from "../../src/devcontainer/identity.js";
import { type ResolveInput, resolveRecipe } from "../../src/devcontainer/index.js";
import { DEVCONTAINER, ROOT_DEVCONTAINER, SCRIPT } from "./support.js";

const identity = (input: ResolveInput) => resolveRecipe(input).identity;
const withBun = (files: Record<string, string>, bun: boolean) => ({
  files,
  hasCommand: (n: string) => bun && n === "bun",
});
const pm = (packageManager: string, extra = {}) => JSON.stringify({ packageManager, ...extra });

describe("Git blob ids", () => {
  it.each([
    ["", "e69de29bb2d1d6434b8b29ae775ad8c2e48c5391"],
    ["hello\n", "ce013625030ba8dba906f756967f9e9ca394464a"],
  ])("match git hash-object for %j", (content, id) => {
    expect(gitBlobId(content)).toBe(id);
    expect(gitBlobId(new TextEncoder().encode(content))).toBe(id);
  });
});

describe("recipe identity", () => {
  it("is a 64-digit lowercase hex string", () => {
    expect(identity({ files: {} })).toMatch(/^[0-9a-f]{64}$/);
  });

  // Each pair: the same recipe before and after a change that must NOT change its identity.
  it.each<[string, ResolveInput, ResolveInput]>([
    [
      "a devcontainer recipe ignores other files, the script and lockfiles",
      { files: { [DEVCONTAINER]: "{}" } },
      {
        files: { [DEVCONTAINER]: "{}", "README.md": "x", [SCRIPT]: "x", "package-lock.json": "{}" },
        executables: [SCRIPT],
      },
    ],
    [
      "a devcontainer recipe is the same whether given as text or bytes",
      { files: { [DEVCONTAINER]: '{ "postCreateCommand": "é" }' } },
      { files: { [DEVCONTAINER]: new TextEncoder().encode('{ "postCreateCommand": "é" }') } },
    ],
    [
      "a devcontainer recipe is content-addressed, so the same file at either path is the same recipe",
      { files: { [DEVCONTAINER]: '{ "postCreateCommand": "x" }' } },
      { files: { [ROOT_DEVCONTAINER]: '{ "postCreateCommand": "x" }' } },
    ],
    [
      "a script recipe ignores other files and lockfiles",
      { files: { [SCRIPT]: "#!/bin/sh\n" }, executables: [SCRIPT] },
      { files: { [SCRIPT]: "#!/bin/sh\n", "yarn.lock": "", "src/a.ts": "" }, executables: [SCRIPT] },
    ],
    [
      "a detected recipe ignores source files and package.json changes outside packageManager",
      { files: { "pnpm-lock.yaml": "l", "package.json": pm("pnpm@9.1.0") } },
      { files: { "pnpm-lock.yaml": "l", "package.json": pm("pnpm@9.1.0", { scripts: { a: "b" } }), "src/a.ts": "" } },
    ],
    [
      "npm ci does not depend on a packageManager pin",
      { files: { "package-lock.json": "l", "package.json": pm("npm@10.0.0") } },
      { files: { "package-lock.json": "l", "package.json": pm("npm@11.0.0") } },
    ],
    [
      "yarn Berry's identity depends on .yarnrc.yml being there, not on its content",
      { files: { "yarn.lock": "l", ".yarnrc.yml": "a: 1" } },
      { files: { "yarn.lock": "l", ".yarnrc.yml": "b: 2" } },
    ],
    [
      "later lockfiles do not matter once an earlier one matched",
      { files: { "pnpm-lock.yaml": "l" } },
      { files: { "pnpm-lock.yaml": "l", "yarn.lock": "y", "package-lock.json": "n", "bun.lock": "b" } },
    ],
    [
      "bun on PATH only matters to a bun recipe",
      withBun({ "package-lock.json": "l" }, false),
      withBun({ "package-lock.json": "l" }, true),
    ],
    [
      "no recipe stays the same across unrelated files",
      { files: {} },
      { files: { "README.md": "x", "package.json": "{}" } },
    ],
    [
      "skipping setup has one constant identity",
      { files: {}, skipSetup: true },
      { files: { [DEVCONTAINER]: "{ broken", "pnpm-lock.yaml": "l" }, skipSetup: true },
    ],
    ["resolution is deterministic", { files: { "yarn.lock": "l" } }, { files: { "yarn.lock": "l" } }],
  ])("stays the same: %s", (_, before, after) => {
    expect(identity(after)).toBe(identity(before));
  });

  // Each pair: a change to the resolved recipe, which MUST change its identity.
  it.each<[string, ResolveInput, ResolveInput]>([
    [
      "the devcontainer file's bytes change (even only a comment: identity follows the blob)",
      { files: { [DEVCONTAINER]: '{ "postCreateCommand": "a" }' } },
      { files: { [DEVCONTAINER]: '{ "postCreateCommand": "a" } // note' } },
    ],
    [
      "the devcontainer commands change",
      { files: { [DEVCONTAINER]: '{ "postCreateCommand": "a" }' } },
      { files: { [DEVCONTAINER]: '{ "postCreateCommand": "b" }' } },
    ],
    [
      "the devcontainer environment changes",
      { files: { [DEVCONTAINER]: '{ "remoteEnv": { "A": "1" } }' } },
      { files: { [DEVCONTAINER]: '{ "remoteEnv": { "A": "2" } }' } },
    ],
    [
      "the fallback script changes",
      { files: { [SCRIPT]: "#!/bin/sh\nnpm ci\n" }, executables: [SCRIPT] },
      { files: { [SCRIPT]: "#!/bin/sh\nnpm install\n" }, executables: [SCRIPT] },
    ],
    ["the detected lockfile changes", { files: { "pnpm-lock.yaml": "a" } }, { files: { "pnpm-lock.yaml": "b" } }],
    [
      "the pinned pnpm version changes (Corepack runs exactly that pnpm)",
      { files: { "pnpm-lock.yaml": "l", "package.json": pm("pnpm@9.1.0") } },
      { files: { "pnpm-lock.yaml": "l", "package.json": pm("pnpm@9.2.0") } },
    ],
    [
      "yarn switches from Classic to Berry through .yarnrc.yml",
      { files: { "yarn.lock": "l" } },
      { files: { "yarn.lock": "l", ".yarnrc.yml": "" } },
    ],
    [
      "yarn switches from Classic to Berry through packageManager",
      { files: { "yarn.lock": "l", "package.json": pm("yarn@1.22.0") } },
      { files: { "yarn.lock": "l", "package.json": pm("yarn@4.0.0") } },
    ],
    ["bun becomes available on PATH", withBun({ "bun.lock": "l" }, false), withBun({ "bun.lock": "l" }, true)],
    [
      "the same bun lockfile bytes move to the other bun format",
      withBun({ "bun.lock": "l" }, true),
      withBun({ "bun.lockb": "l" }, true),
    ],
    [
      "an earlier lockfile appears",
      { files: { "package-lock.json": "l" } },
      { files: { "package-lock.json": "l", "yarn.lock": "l" } },
    ],
    [
      "the script loses its executable bit (detection takes over)",
      { files: { [SCRIPT]: "x", "package-lock.json": "l" }, executables: [SCRIPT] },
      { files: { [SCRIPT]: "x", "package-lock.json": "l" } },
    ],
    ["setup is skipped explicitly instead of finding no recipe", { files: {} }, { files: {}, skipSetup: true }],
  ])("changes: %s", (_, before, after) => {
    expect(identity(after)).not.toBe(identity(before));
  });

  it("differs across sources even when the deciding bytes are identical", () => {
    const bytes = "{}";
    const identities = [
      identity({ files: { [DEVCONTAINER]: bytes } }),
      identity({ files: { [SCRIPT]: bytes }, executables: [SCRIPT] }),
      identity({ files: { "package-lock.json": bytes } }),
      identity({ files: { "pnpm-lock.yaml": bytes } }),
      identity({ files: { "yarn.lock": bytes } }),
      identity({ files: { "bun.lock": bytes } }),
      identity({ files: {} }),
      identity({ files: {}, skipSetup: true }),
    ];
    expect(new Set(identities).size).toBe(identities.length);
  });
});
