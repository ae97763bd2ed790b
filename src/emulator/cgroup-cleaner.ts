// Removes an emulator's cgroups even when the emulator is killed (SIGKILL included) and cannot: a small
// detached shell waits for end-of-file on a pipe only the emulator holds, which comes when the emulator
// ends or closes it, then kills whatever is left in any session group under the given parents and removes
// them. A killed emulator's sandboxes die with it (isolation.ts), but one whose outer process was killed while
// it held a program's user for a spawn (serve-script.ts) sends its holder a parent-death signal the holder may
// refuse (the kernel checks a sender's ids): the cleaner ends that holder, so its sandbox too. Without it, a killed
// emulator would leave empty groups inside its own cgroup, which then could not be removed by whoever
// made that cgroup.
import type { ChildProcess } from "node:child_process";
import type { Socket } from "node:net";
import { spawnHost } from "./host-spawn.js";

/** How long the cleaner keeps trying (its processes take a moment to exit), in 100 ms rounds. */
const ROUNDS = 100;

const SCRIPT = `read _ || :
i=0
while [ $i -lt ${ROUNDS} ]; do
  left=0
  for p in "$@"; do
    [ -d "$p" ] || continue
    for g in "$p"/*/; do
      [ -d "$g" ] || continue
      if [ -f "$g/cgroup.kill" ]; then echo 1 >"$g/cgroup.kill" 2>/dev/null
      elif [ -r "$g/cgroup.procs" ]; then while read -r pid; do kill -9 "$pid" 2>/dev/null; done <"$g/cgroup.procs"
      fi
      rmdir "$g" 2>/dev/null
    done
    rmdir "$p" 2>/dev/null || left=1
  done
  [ $left = 0 ] && exit 0
  i=$((i+1)); sleep 0.1
done`;

export class CgroupCleaner {
  private readonly child: ChildProcess;
  private readonly exited: Promise<void>;

  /** Starts watching; `parents` are removed after the emulator ends or calls `finish`. */
  constructor(parents: string[]) {
    // Detached and unreferenced: a signal to the emulator's process group, or the emulator's exit, leaves it
    // running long enough to clean up; it never keeps the emulator's event loop alive.
    // The host's sh with the fixed host environment (host-spawn.ts), never the emulator's own.
    this.child = spawnHost("sh", ["-c", SCRIPT, "sandbox-cgroup-cleaner", ...parents], {
      stdio: ["pipe", "ignore", "ignore"],
      detached: true,
    });
    this.exited = new Promise((resolve) => this.child.once("close", () => resolve()));
    this.child.once("error", () => {});
    this.child.stdin!.on("error", () => {});
    this.child.unref();
    (this.child.stdin as Socket).unref();
  }

  /** The emulator is done with these parents (removed or not): the cleaner makes sure, then ends. */
  finish(): Promise<void> {
    this.child.stdin!.end();
    return this.exited;
  }
}
