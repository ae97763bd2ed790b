// Finding a sandbox's processes from the host, without emulator internals: by a marker argv (a process in another
// PID namespace than the test's) and, for a sandbox's holder, by being PID 1 of that namespace.
import { randomInt } from "node:crypto";
import { readdirSync, readFileSync, readlinkSync } from "node:fs";
import { expect } from "vitest";

/** Host pids of the processes whose argv is `argv` in another PID namespace than ours (a sandbox's). */
export function hostPidsOf(argv: string[]): number[] {
  const ours = readlinkSync("/proc/self/ns/pid");
  const cmdline = `${argv.join("\0")}\0`;
  return readdirSync("/proc")
    .filter((entry) => /^\d+$/.test(entry))
    .filter((entry) => {
      try {
        return (
          readFileSync(`/proc/${entry}/cmdline`, "utf8") === cmdline && readlinkSync(`/proc/${entry}/ns/pid`) !== ours
        );
      } catch {
        return false; // Exited while scanning.
      }
    })
    .map(Number);
}

/** The host pid of the one sandbox process running `argv`, once it has started. */
export async function hostPidOf(argv: string[]): Promise<number> {
  let pids = hostPidsOf(argv);
  for (let i = 0; i < 200 && pids.length === 0; i++) {
    await new Promise((r) => setTimeout(r, 50));
    pids = hostPidsOf(argv);
  }
  expect(pids).toHaveLength(1);
  return pids[0]!;
}

/** The host pid of PID 1 of the PID namespace host process `pid` runs in: the sandbox's holder. */
export function holderOf(pid: number): number {
  const ns = readlinkSync(`/proc/${pid}/ns/pid`);
  const holders = readdirSync("/proc")
    .filter((entry) => /^\d+$/.test(entry))
    .filter((entry) => {
      try {
        return (
          readlinkSync(`/proc/${entry}/ns/pid`) === ns &&
          /^NSpid:.*\t1$/m.test(readFileSync(`/proc/${entry}/status`, "utf8"))
        );
      } catch {
        return false; // Exited while scanning.
      }
    });
  expect(holders).toHaveLength(1);
  return Number(holders[0]);
}

/** A marker argv no other process on the host runs: `sleep` for a duration of its own. */
export const uniqueSleep = (seconds: number) => ["sleep", `${seconds}.${randomInt(1_000_000_000)}`];
