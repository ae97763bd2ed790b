// Walking the run dir: finding the state databases whose lock files dispose() removes, and the files a
// secret leaked into (the token-hygiene check). Unreadable directories are skipped, not fatal: both walks
// run on a tree the gateway may still be changing.

import type { Dirent } from "node:fs";
import fs from "node:fs/promises";
import path from "node:path";

/** Every non-directory entry under `dir` (recursively), with its full path; skipDir prunes directories by name. */
export async function* walkEntries(
  dir: string,
  skipDir: (name: string) => boolean = () => false,
): AsyncGenerator<{ entry: Dirent; full: string }> {
  for (const entry of await fs.readdir(dir, { withFileTypes: true }).catch(() => [])) {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) {
      if (!skipDir(entry.name)) yield* walkEntries(full, skipDir);
    } else {
      yield { entry, full };
    }
  }
}

/** Files under `root` (tarballs and node_modules skipped, at most 64 MiB each) whose bytes contain `needle`. */
export async function filesContaining(root: string, needle: string): Promise<string[]> {
  const hits: string[] = [];
  const wanted = Buffer.from(needle);
  for await (const { entry, full } of walkEntries(root, (name) => name === "node_modules")) {
    if (!entry.isFile() || /\.(tgz|tar|gz)$/.test(entry.name)) continue;
    const stat = await fs.stat(full).catch(() => undefined);
    if (stat && stat.size <= 64 * 1024 * 1024) {
      const bytes = await fs.readFile(full).catch(() => Buffer.alloc(0));
      if (bytes.includes(wanted)) hits.push(path.relative(root, full));
    }
  }
  return hits;
}
