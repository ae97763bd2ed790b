// What the specs of our durable state files share: private temp state dirs removed after each test, and a
// logger that records the warnings a damaged or unwritable file produces, and a disk that fills up.
import * as fs from "node:fs/promises";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach } from "vitest";
import type { DurableFs } from "../../src/infra/durable-file.js";

/** Registers the cleanup in the calling spec file; each call of the result makes a fresh dir. */
export function tempStateDirs(prefix: string): () => Promise<string> {
  const dirs: string[] = [];
  afterEach(async () => {
    for (const dir of dirs.splice(0)) await rm(dir, { recursive: true, force: true });
  });
  return async () => {
    const dir = await mkdtemp(join(tmpdir(), `${prefix}-`));
    dirs.push(dir);
    return dir;
  };
}

export function recordingLogger() {
  const warnings: string[] = [];
  return { warnings, logger: { warn: (m: string) => warnings.push(m) } };
}

/** The real file operations, except that the first `count` renames fail as on a full disk. */
export function renamesFailing(count: number): DurableFs {
  let left = count;
  return {
    ...fs,
    rename: async (from, to) => {
      if (left-- > 0) throw Object.assign(new Error("disk full"), { code: "ENOSPC" });
      return fs.rename(from, to);
    },
  };
}
