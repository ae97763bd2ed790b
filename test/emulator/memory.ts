// Memory figures for the bounds specs (issue 42): what the process still holds after a full garbage collection,
// and a sampler of the peak while something runs. `gc` is reached through V8's flag, as vitest starts its
// workers without `--expose-gc`.
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";

setFlagsFromString("--expose-gc");
const gc = runInNewContext("gc") as () => void;

export const MiB = 1024 * 1024;

/** Heap and off-heap (Buffer) bytes still reachable after two full collections. */
export function retainedBytes(): number {
  gc();
  gc();
  const m = process.memoryUsage();
  return m.heapUsed + m.external;
}

/** Samples the process's RSS and held bytes every 5 ms until `stop`; the peaks above the values at start. */
export function peakSampler() {
  const held = () => {
    const m = process.memoryUsage();
    return { rss: m.rss, held: m.heapUsed + m.external };
  };
  const start = held();
  const peak = { ...start };
  const sample = () => {
    const now = held();
    peak.rss = Math.max(peak.rss, now.rss);
    peak.held = Math.max(peak.held, now.held);
  };
  const timer = setInterval(sample, 5);
  return {
    stop() {
      clearInterval(timer);
      sample();
      return { rss: peak.rss - start.rss, held: peak.held - start.held };
    },
  };
}
