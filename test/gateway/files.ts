// Walking the run dir: finding the state databases whose lock files dispose() removes. The walk tolerates
// unreadable directories (it only tidies up). The token-hygiene scan is test/support/secret-scan.ts, which does not.

import type { Dirent } from "node:fs";
import fs from "node:fs/promises";
import path from "node:path";

export interface WalkOptions {
  /** Prunes directories by name. */
  skipDir?: (name: string) => boolean;
  /** Rethrow errors reading a directory (other than it vanishing) instead of skipping it. */
  strict?: boolean;
}

/** Every non-directory entry under `dir` (recursively), with its full path. */
export async function* walkEntries(
  dir: string,
  { skipDir = () => false, strict = false }: WalkOptions = {},
): AsyncGenerator<{ entry: Dirent; full: string }> {
  let entries: Dirent[];
  try {
    entries = await fs.readdir(dir, { withFileTypes: true });
  } catch (error) {
    if (strict && !vanished(error)) throw new Error(`cannot read directory ${dir}: ${(error as Error).message}`);
    return;
  }
  for (const entry of entries) {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) {
      if (!skipDir(entry.name)) yield* walkEntries(full, { skipDir, strict });
    } else {
      yield { entry, full };
    }
  }
}

function vanished(error: unknown): boolean {
  return (error as NodeJS.ErrnoException).code === "ENOENT";
}
