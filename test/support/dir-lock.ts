// A lock between the test processes of one machine: a directory made with mkdir (atomic), removed when the work
// ends. A lock older than `staleMs` is a crashed holder's and is broken. The build (test/setup/build.ts) and the
// run cache (run-cache.ts) serialise on it.
import { mkdirSync, rmSync, statSync } from "node:fs";
import path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";

/** Waits for the lock and takes it; the answer releases it. */
export async function acquireDirLock(lock: string, staleMs: number): Promise<() => void> {
  mkdirSync(path.dirname(lock), { recursive: true });
  for (;;) {
    try {
      mkdirSync(lock);
      return () => rmSync(lock, { recursive: true, force: true });
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
      const age = Date.now() - (statSync(lock, { throwIfNoEntry: false })?.mtimeMs ?? Date.now());
      if (age > staleMs) rmSync(lock, { recursive: true, force: true });
      await sleep(200);
    }
  }
}

export async function withDirLock<T>(lock: string, staleMs: number, work: () => Promise<T>): Promise<T> {
  const release = await acquireDirLock(lock, staleMs);
  try {
    return await work();
  } finally {
    release();
  }
}
