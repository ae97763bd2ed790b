// Vitest setup file: the CPU seconds a spec file cost, its own and those of every process it started and waited
// for (a gateway, an emulator's sandboxes: /proc/self/stat's utime, stime, cutime and cstime of the worker, which
// runs this one file), attached to the file's task so the durations reporter can list them beside its seconds.
// CPU, not wall, is what two cores run out of: a spec waiting on a clock costs little of it.
import { readFileSync } from "node:fs";
import { afterAll } from "vitest";

/** Clock ticks per second on Linux (sysconf(_SC_CLK_TCK) is 100 on every kernel Node supports there). */
const TICKS = 100;

/** The worker's CPU seconds so far, with its children's; undefined where /proc has no stat (not Linux). */
export function cpuSeconds(stat = "/proc/self/stat"): number | undefined {
  try {
    const text = readFileSync(stat, "utf8");
    // Fields after the command (which may hold spaces), 1-based from the state: utime is the 12th of them.
    const fields = text.slice(text.lastIndexOf(")") + 2).split(" ");
    const [utime, stime, cutime, cstime] = [11, 12, 13, 14].map((i) => Number(fields[i]));
    return ((utime ?? 0) + (stime ?? 0) + (cutime ?? 0) + (cstime ?? 0)) / TICKS;
  } catch {
    return undefined;
  }
}

// Registered first, so it runs after the spec's own afterAll hooks (vitest runs after-hooks as a stack): the
// processes those end are counted.
// biome-ignore lint/correctness/noEmptyPattern: vitest reads a hook's first parameter as fixtures and wants a pattern
afterAll(({}, suite) => {
  const now = cpuSeconds();
  if (now !== undefined) (suite.meta as { cpuSeconds?: number }).cpuSeconds = now;
});
