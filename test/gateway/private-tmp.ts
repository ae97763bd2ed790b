// Every child of a harness sees the run dir's own copies of the two directories OpenClaw keeps in /tmp whatever
// TMPDIR says, bound over them in a mount namespace of the child's own, so nothing it writes there reaches the
// host's: /tmp/openclaw (from 2026.9.3 on, each gateway process's node-runtime archive, 26–32 MB, which a gateway
// that does not stop cleanly leaves behind) and /tmp/openclaw-state-locks-<uid> (its lock coordinators). All
// children of one harness bind the same directories, so the gateway and the CLI calls beside it still share their
// locks. The rest of /tmp stays as it is (a clone, a cache or a CA file may live there).
// It applies as root (mounts) when both host paths are real directories or absent (then made as OpenClaw makes
// them: 0700, before any child runs); otherwise a child runs as it is, and dispose() removes the lock coordinators
// by name.

import { lstatSync, mkdirSync } from "node:fs";
import path from "node:path";

const UNSHARE = "/usr/bin/unshare";
const SH = "/bin/sh";
// `$0` and `$1` are the run's copies, `$2` the lock dir's host path; the command and its arguments follow.
// `exec` keeps the pid the harness spawned and tracks.
const BIND_AND_EXEC =
  '/usr/bin/mount --bind "$0" /tmp/openclaw && /usr/bin/mount --bind "$1" "$2" && shift 2 && exec "$@"';

/** The host paths OpenClaw writes whatever TMPDIR says. */
export function openclawTmpPaths(): { openclaw: string; locks: string } {
  const uid = process.getuid?.();
  return { openclaw: "/tmp/openclaw", locks: `/tmp/openclaw-state-locks-${uid ?? "unknown"}` };
}

/** The directory holding a run dir's own copies of them. */
export function tmpViewOf(runDir: string): string {
  return path.join(runDir, "tmp-root");
}

/** The run's copy of each host path. */
export function viewPaths(runDir: string): { openclaw: string; locks: string } {
  const host = openclawTmpPaths();
  return {
    openclaw: path.join(tmpViewOf(runDir), path.basename(host.openclaw)),
    locks: path.join(tmpViewOf(runDir), path.basename(host.locks)),
  };
}

/**
 * Whether children get the private copies: as root, with each host path a real directory (never a link another
 * user planted in the shared /tmp), made 0700 first where it is absent.
 */
export function privateTmpApplies(): boolean {
  if (process.platform !== "linux" || process.getuid?.() !== 0) return false;
  for (const target of Object.values(openclawTmpPaths())) {
    try {
      mkdirSync(target, { mode: 0o700 });
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "EEXIST") return false;
    }
    if (!lstatSync(target).isDirectory()) return false;
  }
  return true;
}

/** `command args` wrapped so it runs with the run's copies bound over the host paths, in a private mount namespace. */
export function inPrivateTmp(runDir: string, command: string, args: string[]): { command: string; args: string[] } {
  const view = viewPaths(runDir);
  return {
    command: UNSHARE,
    args: [
      "--mount",
      "--propagation",
      "private",
      "--",
      SH,
      "-c",
      BIND_AND_EXEC,
      view.openclaw,
      view.locks,
      openclawTmpPaths().locks,
      command,
      ...args,
    ],
  };
}
