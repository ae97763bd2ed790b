// Every child of a harness sees the run dir's `tmp-root` as `/tmp`, in a mount namespace of its own, so nothing
// it writes to /tmp reaches the host's. OpenClaw writes there whatever TMPDIR says: its lock coordinators
// (/tmp/openclaw-state-locks-<uid>) and, from 2026.9.3 on, the node-runtime archive of each gateway process
// (`/tmp/openclaw/openclaw-node-runtime-*`, 26–32 MB, left behind by every gateway a spec kills). All children of
// one harness bind the same directory, so the gateway and the CLI calls beside it still share their locks.
// The view applies only where it can: as root (mounts), with the run dir outside /tmp (a bind over /tmp would
// hide the run dir itself); elsewhere a child runs as it is, and dispose() removes the lock coordinators by name.

import { realpathSync } from "node:fs";
import path from "node:path";

const UNSHARE = "/usr/bin/unshare";
const SH = "/bin/sh";
// `$0` is the view; the command and its arguments follow. `exec` keeps the pid the harness spawned and tracks.
const BIND_AND_EXEC = '/usr/bin/mount --bind "$0" /tmp && exec "$@"';

/** The directory a run dir's children see as /tmp. */
export function tmpViewOf(runDir: string): string {
  return path.join(runDir, "tmp-root");
}

/** Whether children of `runDir` get the private /tmp: as root, with the run dir outside /tmp. */
export function privateTmpApplies(runDir: string): boolean {
  if (process.platform !== "linux" || process.getuid?.() !== 0) return false;
  const real = realpathSync(runDir);
  const tmp = realpathSync("/tmp");
  return real !== tmp && !real.startsWith(`${tmp}${path.sep}`);
}

/** `command args` wrapped so it runs with `view` bound over /tmp in a private mount namespace. */
export function inPrivateTmp(view: string, command: string, args: string[]): { command: string; args: string[] } {
  return {
    command: UNSHARE,
    args: ["--mount", "--propagation", "private", "--", SH, "-c", BIND_AND_EXEC, view, command, ...args],
  };
}
