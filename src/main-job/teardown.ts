// Everything the main job starts is registered here as it starts, and ended in reverse order at the end: on
// success, on failure, and on Ctrl-C or SIGTERM (the first signal starts the teardown; a second one exits at
// once). Each step runs even when an earlier one failed; failures are reported, not hidden.
import type { Log } from "./report.js";

export class Teardown {
  private readonly steps: Array<{ label: string; run: () => Promise<unknown> }> = [];
  private running?: Promise<string[]>;

  add(label: string, run: () => Promise<unknown>): void {
    this.steps.push({ label, run });
  }

  /** Runs every step (last added first); resolves with the labels of the steps that failed. */
  run(log: Log): Promise<string[]> {
    this.running ??= (async () => {
      const failed: string[] = [];
      for (const step of this.steps.splice(0).reverse()) {
        try {
          await step.run();
        } catch (error) {
          failed.push(step.label);
          log(`    teardown: ${step.label} failed: ${(error as Error).message}`);
        }
      }
      return failed;
    })();
    return this.running;
  }
}

/**
 * A Ctrl-C often arrives twice within milliseconds: the terminal signals the whole process group, and a parent
 * that forwards signals (scripts/node24.mjs, npm) sends it again. Only a repeat after this long is a second press.
 */
export const REPEAT_MS = 1_500;

/**
 * Calls `onSignal` on the first SIGINT/SIGTERM; a second press (a signal more than REPEAT_MS later) exits at once
 * without waiting for the teardown. Returns the unsubscribe.
 */
export function onInterrupt(onSignal: (signal: NodeJS.Signals) => void, now = () => performance.now()): () => void {
  let firstAt: number | undefined;
  const handler = (signal: NodeJS.Signals) => {
    if (firstAt !== undefined) {
      if (now() - firstAt > REPEAT_MS) process.exit(130);
      return;
    }
    firstAt = now();
    onSignal(signal);
  };
  process.on("SIGINT", handler);
  process.on("SIGTERM", handler);
  return () => {
    process.off("SIGINT", handler);
    process.off("SIGTERM", handler);
  };
}
