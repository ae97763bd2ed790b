// Host-side walks over a sandbox's files (an upper layer copied for a snapshot or a fork, the image's
// Node copy). They run only on copies the emulator made and no sandbox can reach at the time, never
// follow a symbolic link (lstat/lchown; a link is changed as itself, never its target, and never
// descended into), and keep everything but what they change: overlay whiteouts (character devices),
// opaque-directory xattrs and hard links among the copies stay as they are.

import { execFile } from "node:child_process";
import type { Stats } from "node:fs";
import { chmod, lchown, lstat, opendir } from "node:fs/promises";
import path from "node:path";
import { promisify } from "node:util";
import { shiftId } from "./id-ranges.js";

const run = promisify(execFile);

/** Copies `src` to `dst` (which must not exist) with owners, modes, times, links and xattrs kept. */
export async function copyTree(src: string, dst: string): Promise<void> {
  await run("cp", ["-a", "--reflink=auto", src, dst]);
}

/** Calls `visit` for `dir` and everything under it, depth first, without following symbolic links. */
export async function walkNoFollow(dir: string, visit: (p: string, stat: Stats) => Promise<void>): Promise<void> {
  const stat = await lstat(dir);
  await visit(dir, stat);
  if (!stat.isDirectory()) return;
  for await (const entry of await opendir(dir)) await walkNoFollow(path.join(dir, entry.name), visit);
}

/** Sets owner and group of `p` without following a link, keeping set-user/group-ID bits chown clears. */
async function setOwner(p: string, stat: Stats, uid: number, gid: number): Promise<void> {
  if (stat.uid === uid && stat.gid === gid) return;
  await lchown(p, uid, gid);
  if (!stat.isSymbolicLink() && stat.mode & 0o6000) await chmod(p, stat.mode & 0o7777);
}

/**
 * Moves every file of `dir` owned by an id of range `from` to the same sandbox id in range `to`, so a
 * snapshot (or a fork) of one sandbox restored into another keeps its owners as the sandbox sees them.
 */
export async function shiftOwners(dir: string, from: number, to: number): Promise<void> {
  if (from === to) return;
  await walkNoFollow(dir, (p, stat) => setOwner(p, stat, shiftId(stat.uid, from, to), shiftId(stat.gid, from, to)));
}

/** Makes a copied tree host root's and read-only to everyone else: directories 0755, files 0755 or 0644. */
export async function ownByHostRoot(dir: string): Promise<void> {
  await walkNoFollow(dir, async (p, stat) => {
    if (stat.isSymbolicLink()) return lchown(p, 0, 0);
    await lchown(p, 0, 0);
    await chmod(p, stat.isDirectory() || stat.mode & 0o111 ? 0o755 : 0o644);
  });
}
