// Vitest global setup: the run cache, one directory per `vitest run` that every worker sees (VSB_TEST_RUN_CACHE),
// for what one spec file builds and others of the same run reuse (test/support/run-cache.ts): the installed-plugin
// state per OpenClaw version and tarball. It lives in the run's own TMPDIR (temp-check.ts runs first) and is
// removed at teardown, before the temp check looks for leftovers.
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { RUN_CACHE_ENV, RUN_CACHE_PREFIX } from "../support/run-cache.js";

export default async function setup(): Promise<() => Promise<void>> {
  const dir = await mkdtemp(path.join(tmpdir(), RUN_CACHE_PREFIX));
  process.env[RUN_CACHE_ENV] = dir;
  return async () => {
    delete process.env[RUN_CACHE_ENV];
    await rm(dir, { recursive: true, force: true, maxRetries: 3 });
  };
}
