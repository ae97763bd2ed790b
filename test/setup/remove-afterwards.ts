// Removal of a temp path a spec or fixture creates, on success, failure and timeout alike: inside a running test
// when that test finishes (onTestFinished), otherwise (a describe body, at collection) after the enclosing suite.
import { rm } from "node:fs/promises";
import { afterAll, onTestFinished } from "vitest";

/** Removes `target` (recursively) once the current test, or else the current suite, has finished. */
export function removeAfterwards(target: string): void {
  const remove = () => rm(target, { recursive: true, force: true, maxRetries: 3 });
  try {
    onTestFinished(remove);
  } catch {
    // Not inside a test: the suite being collected owns it.
    afterAll(remove);
  }
}
