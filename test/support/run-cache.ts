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
import { acquireDirLock, withDirLock } from "./dir-lock.js";
import { machineCacheDir } from "./machine-cache.js";

export const RUN_CACHE_ENV = "VSB_TEST_RUN_CACHE";
export const RUN_CACHE_PREFIX = "vsb-run-cache-";
/** A holder that takes longer than this crashed (the slowest maker, a base image under load, takes minutes). */
const STALE_MS = 30 * 60_000;

export function runCacheDir(): string | undefined {
  return process.env[RUN_CACHE_ENV];
}

export type Shared = { dir: string; made: boolean };

export interface SharedOptions {
  /** Keep it in the machine cache under `<name>-<machineKey>` too, and start from that copy when there is one. */
  machineKey?: string;
  /** Whether a kept copy can still serve (e.g. not expired); one that cannot is replaced. */
  usable?: (dir: string) => boolean;
}

/** The right to make the run cache's `name`: others wait until `release`; what `publish` put in place they reuse. */
export interface Hold {
  /** Where the maker puts it (an empty directory's path, not yet made). */
  staging: string;
  /** Moves `staging` into the run cache (and the machine cache); call once, before release. */
  publish(): Promise<void>;
  /** Lets the waiting callers go on; without a publish they make it themselves. Idempotent. */
  release(): Promise<void>;
}

/** Replaces `to` with a copy of `from`, atomically (a staging copy renamed into place). */
async function keep(from: string, to: string): Promise<void> {
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
 * Takes the right to make the run cache's `name` (waiting while another caller holds it), for a maker whose work
 * spans more than one call (a spec that builds it in a test case). Undefined when there is no run cache or when it
 * is there already (made in this run, or copied from the machine cache now): then there is nothing to make.
 */
export async function holdInRun(name: string, options: SharedOptions = {}): Promise<Hold | undefined> {
  const root = runCacheDir();
  if (!root) return undefined;
  const dir = path.join(root, name);
  const kept = options.machineKey ? path.join(machineCacheDir(), "runs", `${name}-${options.machineKey}`) : undefined;
  const unlock = await acquireDirLock(`${dir}.lock`, STALE_MS);
  try {
    if (existsSync(dir)) {
      unlock();
      return undefined;
    }
    if (kept && existsSync(kept) && (options.usable?.(kept) ?? true)) {
      await copyTree(kept, dir, { links: true });
      unlock();
      return undefined;
    }
  } catch (error) {
    unlock();
    throw error;
  }
  const staging = `${dir}.staging`;
  await rm(staging, { recursive: true, force: true });
  let released = false;
  return {
    staging,
    publish: async () => {
      await rename(staging, dir);
      if (kept) await withDirLock(`${kept}.lock`, STALE_MS, () => keep(dir, kept));
    },
    release: async () => {
      if (released) return;
      released = true;
      try {
        await rm(staging, { recursive: true, force: true });
      } finally {
        unlock();
      }
    },
  };
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
  const hold = await holdInRun(name, options);
  if (!hold) return { dir, made: false };
  try {
    await make(hold.staging);
    await hold.publish();
  } finally {
    await hold.release();
  }
  return { dir, made: true };
}
