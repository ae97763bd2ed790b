// Walking the run dir: finding the state databases whose lock files dispose() removes, and the files a
// secret leaked into (the token-hygiene check). The lock walk tolerates unreadable directories (it only tidies
// up); the hygiene scan does not: a file it cannot read could hold the secret, so it throws, and it reports how
// many files it read so a test can prove it looked at something.

import type { Dirent } from "node:fs";
import { createReadStream } from "node:fs";
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

export interface SecretScan {
  /** Files (relative to the root) whose bytes contain the needle. */
  matches: string[];
  /** Regular files read to the end. */
  filesRead: number;
  /** Entries that are not regular files (sockets, FIFOs, devices, symlinks): they hold no bytes of their own. */
  notFiles: number;
}

/**
 * Scans every regular file under `root` for `needle` (node_modules and npm tarballs skipped: installed
 * dependencies and compressed packs of the repo). Throws on any file or directory it cannot read, except one
 * that vanished while it walked (the gateway may still be writing; a renamed file is read under its new name).
 */
export async function scanForSecret(root: string, needle: string): Promise<SecretScan> {
  if (!needle) throw new Error("scanForSecret needs a non-empty needle");
  const scan: SecretScan = { matches: [], filesRead: 0, notFiles: 0 };
  const wanted = Buffer.from(needle);
  const walk = walkEntries(root, { skipDir: (name) => name === "node_modules", strict: true });
  for await (const { entry, full } of walk) {
    if (!entry.isFile()) {
      scan.notFiles += 1;
      continue;
    }
    if (/\.(tgz|tar|gz)$/.test(entry.name)) continue;
    let found: boolean;
    try {
      found = await streamContains(full, wanted);
    } catch (error) {
      if (vanished(error)) continue;
      throw new Error(`cannot read ${path.relative(root, full)}: ${(error as Error).message}`);
    }
    scan.filesRead += 1;
    if (found) scan.matches.push(path.relative(root, full));
  }
  return scan;
}

/** Whether the file's bytes contain `wanted`, read as a stream (any size), matches across chunk edges included. */
async function streamContains(file: string, wanted: Buffer): Promise<boolean> {
  let tail = Buffer.alloc(0);
  for await (const chunk of createReadStream(file)) {
    const window = Buffer.concat([tail, chunk as Buffer]);
    if (window.includes(wanted)) return true;
    tail = window.subarray(Math.max(0, window.length - wanted.length + 1));
  }
  return false;
}

function vanished(error: unknown): boolean {
  return (error as NodeJS.ErrnoException).code === "ENOENT";
}
