// One pinned npm package installed for the specs into a directory of its own under .cache (never the root
// node_modules): a fresh staging project with the given manifest and the repo's .npmrc (release age and strict
// install scripts stay on), renamed into place once complete, so test files that need it at the same time never
// see half an install (the loser of the rename keeps the winner's). The side-by-side gateways and the Codex CLI use it.
import fs from "node:fs/promises";
import path from "node:path";
import { NPM_CACHE, REPO_ROOT } from "./openclaw.js";
import { ChildProcesses } from "./processes.js";

const INSTALL_TIMEOUT_MS = 10 * 60_000;

export interface StagedInstall {
  /** Where the install ends up. */
  prefix: string;
  /** Where the staging directory is made (`mkdtemp` prefix). */
  stagingPrefix: string;
  /** The staging project's package.json text. */
  manifest: string;
  /** What is installed, for errors (`openclaw@2026.9.5`). */
  what: string;
  /** Whether a directory holds a complete install; checked on the staging dir and before replacing `prefix`. */
  complete: (dir: string) => boolean;
}

/** Installs into a staging directory, checks it, and renames it to `prefix` unless another install got there first. */
export async function installStaged({ prefix, stagingPrefix, manifest, what, complete }: StagedInstall): Promise<void> {
  await fs.mkdir(path.dirname(stagingPrefix), { recursive: true });
  const staging = await fs.mkdtemp(stagingPrefix);
  const processes = new ChildProcesses((text) => text);
  try {
    await fs.writeFile(path.join(staging, "package.json"), manifest);
    await fs.copyFile(path.join(REPO_ROOT, ".npmrc"), path.join(staging, ".npmrc"));
    const result = await processes.run("npm", ["install", "--no-audit", "--no-fund", "--loglevel=error"], {
      cwd: staging,
      timeoutMs: INSTALL_TIMEOUT_MS,
      env: { ...(process.env as Record<string, string>), npm_config_cache: NPM_CACHE },
    });
    if (result.code !== 0) {
      throw new Error(`npm install ${what} failed (exit ${result.code}):\n${result.stderr.slice(-3000)}`);
    }
    if (!complete(staging)) throw new Error(`npm installed no complete ${what} in ${staging}`);
    // Another test file may have installed it meanwhile (and may be running it): its install is as good as ours.
    if (!complete(prefix)) {
      await fs.rm(prefix, { recursive: true, force: true });
      await fs.rename(staging, prefix).catch((error: NodeJS.ErrnoException) => {
        if (!complete(prefix)) throw error;
      });
    }
  } finally {
    await processes.terminateAll();
    await fs.rm(staging, { recursive: true, force: true });
  }
}
