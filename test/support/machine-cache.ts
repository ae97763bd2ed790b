// What the specs keep between runs on this machine, outside any clone: installed gateways of later releases, the
// Codex CLI, and what a run builds once (run-cache.ts: the base runtime images, the installed-plugin state), each
// under a name that carries the digest of everything it was made from, so a change of any input makes a new entry
// and an old one is never taken for it. A fresh machine has none and builds everything; a second run of any clone
// on the machine starts from them. `VSB_TEST_MACHINE_CACHE` moves it (default: $XDG_CACHE_HOME or ~/.cache, then
// openclaw-vercel-sandbox-tests); removing the directory is always safe.
import { createHash } from "node:crypto";
import { lstatSync, readdirSync, readFileSync } from "node:fs";
import { homedir } from "node:os";
import path from "node:path";

export const MACHINE_CACHE_ENV = "VSB_TEST_MACHINE_CACHE";

export function machineCacheDir(): string {
  const configured = process.env[MACHINE_CACHE_ENV];
  if (configured) return path.resolve(configured);
  const base = process.env.XDG_CACHE_HOME || path.join(homedir(), ".cache");
  return path.join(base, "openclaw-vercel-sandbox-tests");
}

/** The first 16 hex digits of the SHA-256 of the parts, in order (each length-prefixed, so parts cannot run together). */
export function contentKey(...parts: Array<string | Buffer>): string {
  const hash = createHash("sha256");
  for (const part of parts) {
    const bytes = typeof part === "string" ? Buffer.from(part) : part;
    hash.update(`${bytes.length}:`).update(bytes);
  }
  return hash.digest("hex").slice(0, 16);
}

/** Every file under `dir` (recursively, sorted, links not followed) as `relative path` and content, for contentKey. */
export function treeParts(dir: string): string[] {
  const parts: string[] = [];
  const walk = (relative: string) => {
    const full = path.join(dir, relative);
    const stat = lstatSync(full, { throwIfNoEntry: false });
    if (!stat) return;
    if (stat.isDirectory()) {
      for (const name of readdirSync(full).sort()) walk(path.join(relative, name));
    } else if (stat.isFile()) {
      parts.push(relative, readFileSync(full, "utf8"));
    }
  };
  walk("");
  return parts;
}
