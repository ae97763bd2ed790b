// Host-side walks over trees a sandbox may have written: a drive moved into another sandbox's id range, a drive
// copied for a snapshot mount, frozen layers merged into one, and the image's copy of the runtime's Node made
// host root's. They run as host root, so each goes by file descriptor and never follows a link the tree holds,
// even one renamed over an entry while the walk runs (host-tree.py.ts says how). They keep everything but what
// they change: overlay whiteouts, opaque-directory xattrs and hard links within the tree stay as they are. A
// device node or a socket is never copied. The callers also make sure no live session can write the tree while
// it is walked (drives.ts holds a drive for the walk); the walk by descriptor is what holds if that ever fails.
import { runHost } from "./host-spawn.js";
import { HOST_TREE_PY } from "./host-tree.py.js";
import { SANDBOX_ID_COUNT } from "./id-ranges.js";
import { PYTHON, PYTHON_FLAGS } from "./layers.js";

/** Thrown when a walk could not finish: the tree changed under it (a link or another entry in place of what it stat'ed), or an I/O error. */
export class HostTreeWalkError extends Error {
  override readonly name = "HostTreeWalkError";
}

async function walk(op: string, args: readonly (string | number)[]): Promise<void> {
  try {
    // No time limit: a copy takes as long as the tree is big, and the walk never waits on anything but the disk.
    await runHost(PYTHON, [...PYTHON_FLAGS, "-c", HOST_TREE_PY, op, ...args.map(String)], { timeoutMs: 0 });
  } catch (error) {
    const stderr = String((error as { stderr?: string }).stderr ?? "").trim();
    throw new HostTreeWalkError(`${op} ${args[0]}: ${stderr || (error as Error).message}`);
  }
}

/**
 * Copies `src` to `dst` (which must not exist; its parent is the emulator's), moving owners of range `from` to the
 * same ids of range `to` (`from` undefined: owners kept). Links are copied as links, never followed.
 */
export function copyTree(src: string, dst: string, shift?: { from: number; to: number }): Promise<void> {
  return walk("copy", [src, dst, shift?.from ?? -1, shift?.to ?? 0, SANDBOX_ID_COUNT]);
}

/**
 * Moves every file of `dir` owned by an id of range `from` to the same sandbox id in range `to`, so a drive (or a
 * layer) of one sandbox keeps its owners as the sandbox sees them in another; set-user/group-ID bits are kept.
 */
export async function shiftOwners(dir: string, from: number, to: number): Promise<void> {
  if (from === to) return;
  await walk("shift", [dir, from, to, SANDBOX_ID_COUNT]);
}

/** Makes a copied tree host root's and read-only to everyone else: directories 0755, files 0755 or 0644. */
export function ownByHostRoot(dir: string): Promise<void> {
  return walk("own-root", [dir]);
}

/**
 * Writes the merge of frozen layers (top first; each its absolute dir and id base) into `dest` the way the
 * overlay reads them, owned in range `idBase`.
 */
export function mergeLayers(dest: string, idBase: number, layers: readonly { dir: string; idBase: number }[]) {
  return walk("merge", [dest, idBase, SANDBOX_ID_COUNT, ...layers.flatMap((l) => [l.dir, l.idBase])]);
}
