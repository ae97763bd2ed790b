// What one spec file of a run builds once and the others reuse: a directory per name in the run cache
// (test/setup/run-cache.ts), made by the first caller under a lock while later callers wait for it. With a
// machine key (the digest of everything it is made from, machine-cache.ts) it is also kept in the machine cache,
// and a later run on this machine starts from that copy instead of making it. Outside a vitest run with that
// global setup (a single spec run by hand with another config) there is no run cache, and every caller builds
// its own.
import { existsSync } from "node:fs";
import { rename, rm } from "node:fs/promises";
import path from "node:path";
import { copyTree } from "./copy-tree.js";
import { withDirLock } from "./dir-lock.js";
import { machineCacheDir } from "./machine-cache.js";

export const RUN_CACHE_ENV = "VSB_TEST_RUN_CACHE";
export const RUN_CACHE_PREFIX = "vsb-run-cache-";
/** A holder that takes longer than this crashed (the slowest maker, a base image under load, takes minutes). */
const STALE_MS = 30 * 60_000;

export function runCacheDir(): string | undefined {
  return process.env[RUN_CACHE_ENV];
}

export type Shared = { dir: string; made: boolean; fromMachine: boolean };

export interface SharedOptions {
  /** Keep it in the machine cache under `<name>-<machineKey>` too, and start from that copy when there is one. */
  machineKey?: string;
  /** Whether a kept copy can still serve (e.g. not expired); one that cannot is replaced. */
  usable?: (dir: string) => boolean;
}

/** Replaces `to` with a copy of `from`, atomically (a staging copy renamed into place). */
async function publish(from: string, to: string): Promise<void> {
  const staging = `${to}.staging-${process.pid}`;
  await rm(staging, { recursive: true, force: true });
  try {
    await copyTree(from, staging, { links: true });
    await rm(to, { recursive: true, force: true });
    await rename(staging, to);
  } finally {
    await rm(staging, { recursive: true, force: true });
  }
}

/**
 * The run cache's `name`: when it is missing, `make(staging)` fills a staging directory that then becomes it, all
 * under the name's lock, so callers at the same time wait for the first instead of each doing the work. `made` says
 * whether this caller made it. Undefined when there is no run cache. A failed make leaves nothing.
 */
export async function sharedInRun(
  name: string,
  make: (staging: string) => Promise<void>,
  options: SharedOptions = {},
): Promise<Shared | undefined> {
  const root = runCacheDir();
  if (!root) return undefined;
  const dir = path.join(root, name);
  const kept = options.machineKey ? path.join(machineCacheDir(), "runs", `${name}-${options.machineKey}`) : undefined;
  return withDirLock(`${dir}.lock`, STALE_MS, async () => {
    if (existsSync(dir)) return { dir, made: false, fromMachine: false };
    if (kept && existsSync(kept) && (options.usable?.(kept) ?? true)) {
      await copyTree(kept, dir, { links: true });
      return { dir, made: false, fromMachine: true };
    }
    const staging = `${dir}.staging`;
    await rm(staging, { recursive: true, force: true });
    try {
      await make(staging);
      await rename(staging, dir);
    } finally {
      await rm(staging, { recursive: true, force: true });
    }
    if (kept) await withDirLock(`${kept}.lock`, STALE_MS, () => publish(dir, kept));
    return { dir, made: true, fromMachine: false };
  });
}
