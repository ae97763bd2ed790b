// What the specs of our durable state files share: private temp state dirs removed after each test, and a
// logger that records the warnings a damaged or unwritable file produces.
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach } from "vitest";

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
