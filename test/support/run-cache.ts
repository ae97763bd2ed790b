// What one spec file of a run builds once and the others reuse: a directory per name in the run cache
// (test/setup/run-cache.ts), made by the first caller under a lock while later callers wait for it. Outside a
// vitest run with that global setup (a single spec run by hand with another config) there is no run cache, and
// every caller builds its own.
import { existsSync } from "node:fs";
import { rename, rm } from "node:fs/promises";
import path from "node:path";
import { withDirLock } from "./dir-lock.js";

export const RUN_CACHE_ENV = "VSB_TEST_RUN_CACHE";
export const RUN_CACHE_PREFIX = "vsb-run-cache-";
/** A holder that takes longer than this crashed (the slowest maker, a plugin install under load, takes minutes). */
const STALE_MS = 20 * 60_000;

export function runCacheDir(): string | undefined {
  return process.env[RUN_CACHE_ENV];
}

export type Shared = { dir: string; made: boolean };

/**
 * The run cache's `name`: when it is missing, `make(staging)` fills a staging directory that then becomes it, all
 * under the name's lock, so callers at the same time wait for the first instead of each doing the work. `made` says
 * whether this caller made it. Undefined when there is no run cache. A failed make leaves nothing.
 */
export async function sharedInRun(name: string, make: (staging: string) => Promise<void>): Promise<Shared | undefined> {
  const root = runCacheDir();
  if (!root) return undefined;
  const dir = path.join(root, name);
  return withDirLock(`${dir}.lock`, STALE_MS, async () => {
    if (existsSync(dir)) return { dir, made: false };
    const staging = `${dir}.staging`;
    await rm(staging, { recursive: true, force: true });
    try {
      await make(staging);
      await rename(staging, dir);
    } finally {
      await rm(staging, { recursive: true, force: true });
    }
    return { dir, made: true };
  });
}
