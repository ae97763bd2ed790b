// Specs that read the built package (dist/, openclaw.plugin.json) call ensureBuilt() first, so they never test
// a stale build when vitest runs outside `npm test`: it runs `npm run build` once when any output is missing or
// older than any input. A lock directory serialises builds between test files running in parallel workers.

import { readdirSync, statSync } from "node:fs";
import path from "node:path";
import { REPO_ROOT } from "../gateway/openclaw.js";
import { ChildProcesses } from "../gateway/processes.js";
import { withDirLock } from "../support/dir-lock.js";

const INPUTS = ["src", "tsup.config.ts", "package.json", "tsconfig.json", "scripts/manifest.mjs"];
const OUTPUTS = [
  "openclaw.plugin.json",
  "dist/index.js",
  "dist/index.d.ts",
  "dist/cli.js",
  "dist/config.js",
  ...["emulator", "provider", "devcontainer", "conformance"].flatMap((room) => [
    `dist/${room}/index.js`,
    `dist/${room}/index.d.ts`,
  ]),
];
const LOCK = path.join(REPO_ROOT, ".cache", "build.lock");
const LOCK_STALE_MS = 10 * 60_000;

/** Newest modification time under `relative` (a file, or a directory walked recursively). */
function newestMtime(relative: string): number {
  const full = path.join(REPO_ROOT, relative);
  const stat = statSync(full);
  if (!stat.isDirectory()) return stat.mtimeMs;
  let newest = stat.mtimeMs;
  for (const name of readdirSync(full)) newest = Math.max(newest, newestMtime(path.join(relative, name)));
  return newest;
}

/** Why the build is stale ("dist/x.js is missing", "src is newer than dist/x.js"), or undefined when fresh. */
export function staleness(): string | undefined {
  const newestInput = Math.max(...INPUTS.map(newestMtime));
  for (const output of OUTPUTS) {
    let mtime: number;
    try {
      mtime = statSync(path.join(REPO_ROOT, output)).mtimeMs;
    } catch {
      return `${output} is missing`;
    }
    if (mtime < newestInput) return `the sources are newer than ${output}`;
  }
  return undefined;
}

/** Builds the package (`npm run build`) unless dist/ and the manifest are newer than every source. */
export async function ensureBuilt(timeoutMs = 240_000): Promise<void> {
  if (!staleness()) return;
  await withDirLock(LOCK, LOCK_STALE_MS, async () => {
    const reason = staleness();
    if (!reason) return; // another worker built it while this one waited
    const processes = new ChildProcesses((text) => text);
    const result = await processes.run("npm", ["run", "build"], {
      cwd: REPO_ROOT,
      env: { ...process.env },
      timeoutMs,
    });
    if (result.code !== 0 || result.timedOut) {
      const tail = `${result.stdout}\n${result.stderr}`.trim().split("\n").slice(-30).join("\n");
      throw new Error(`npm run build (${reason}) ${result.timedOut ? "timed out" : `exited ${result.code}`}\n${tail}`);
    }
    const still = staleness();
    if (still) throw new Error(`npm run build succeeded but the build is still stale: ${still}`);
  });
}
