// Temp dirs a process owns and must not leave behind: the emulator's data dir when the caller names none (its
// image, sandboxes, snapshots and the route CA's private key, ~190 MB), the main job's work dir and the test
// run's TMPDIR. The name
// records the owner's pid (`<prefix><pid>-XXXXXX`). The dir goes on close; if the process exits first, or is
// ended by SIGTERM/SIGINT/SIGHUP, a synchronous rm runs from the exit/signal hook. A SIGKILL runs nothing (nor
// does a signal another handler re-raises after this one declined it), so each new owner first removes the dirs
// of its prefix whose recorded process is gone.
import { rmSync } from "node:fs";
import { mkdtemp, readdir, rm, stat } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";

export interface OwnedTempDir {
  readonly path: string;
  /** Removes the dir (idempotent); the exit and signal hooks stop covering it. */
  remove(): Promise<void>;
  /** Leaves the dir in place (a post-mortem): the hooks stop covering it, a later owner's sweep removes it. */
  keep(): void;
}

const SIGNALS: NodeJS.Signals[] = ["SIGTERM", "SIGINT", "SIGHUP"];
const owned = new Set<string>();

/** The pid a dir name of `prefix` records, or undefined when the name is not one of ours. */
export function ownerPidOf(name: string, prefix: string): number | undefined {
  if (!name.startsWith(prefix)) return undefined;
  const match = /^(\d+)-[A-Za-z0-9]{6}$/.exec(name.slice(prefix.length));
  const pid = match ? Number(match[1]) : Number.NaN;
  return Number.isSafeInteger(pid) && pid > 0 ? pid : undefined;
}

/** Creates `<parent>/<prefix><pid>-XXXXXX`, after removing the stale dirs of dead owners of the same prefix. */
export async function createOwnedTempDir(prefix: string, parent = tmpdir()): Promise<OwnedTempDir> {
  await sweepStaleTempDirs(prefix, parent);
  const dir = await mkdtemp(path.join(parent, `${prefix}${process.pid}-`));
  owned.add(dir);
  hook();
  let removing: Promise<void> | undefined;
  return {
    path: dir,
    remove() {
      removing ??= rm(dir, { recursive: true, force: true, maxRetries: 3 }).finally(() => forget(dir));
      return removing;
    },
    keep: () => forget(dir),
  };
}

/**
 * Removes `<parent>/<prefix><pid>-XXXXXX` dirs whose process is gone and that belong to this user; returns their
 * paths. A dir whose pid is alive (its owner, or a process that reused the pid) is kept: a later start sweeps it.
 */
export async function sweepStaleTempDirs(prefix: string, parent = tmpdir()): Promise<string[]> {
  const removed: string[] = [];
  for (const name of await readdir(parent).catch(() => [] as string[])) {
    const pid = ownerPidOf(name, prefix);
    if (pid === undefined || pid === process.pid || isAlive(pid)) continue;
    const full = path.join(parent, name);
    const info = await stat(full).catch(() => undefined);
    if (!info?.isDirectory() || info.uid !== process.getuid?.()) continue;
    await rm(full, { recursive: true, force: true, maxRetries: 3 });
    removed.push(full);
  }
  return removed;
}

/** Whether a process `pid` exists (EPERM: it does, as another user's). */
export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}

function forget(dir: string): void {
  if (!owned.delete(dir) || owned.size > 0) return;
  process.removeListener("exit", removeAllNow);
  for (const signal of SIGNALS) process.removeListener(signal, onSignal);
}

/** Installs the exit and signal hooks that are not installed (a declined signal removed them). */
function hook(): void {
  if (!process.listeners("exit").includes(removeAllNow)) process.on("exit", removeAllNow);
  for (const signal of SIGNALS) if (!process.listeners(signal).includes(onSignal)) process.on(signal, onSignal);
}

function removeAllNow(): void {
  for (const dir of owned) {
    try {
      rmSync(dir, { recursive: true, force: true, maxRetries: 3 });
    } catch {
      // Exiting: the next owner's sweep removes what this could not.
    }
  }
  owned.clear();
}

// A termination signal nobody else handles would end the process before any exit hook: remove the dirs, then
// re-raise it so it keeps its default (termination). When another handler takes the signal (a graceful close:
// the main job's teardown, the CLI's Ctrl-C), that handler ends the process; close or the exit hook removes them.
function onSignal(signal: NodeJS.Signals): void {
  for (const s of SIGNALS) process.removeListener(s, onSignal);
  if (process.listenerCount(signal) > 0) return;
  removeAllNow();
  process.removeListener("exit", removeAllNow);
  process.kill(process.pid, signal);
}
