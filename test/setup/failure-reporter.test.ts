// The failure reporter: a run whose test and whose hook fail prints each reason as it happens, before vitest's
// own summary at the end.
import { expect, it } from "vitest";
import { runProbe } from "./probe-run.js";

it("prints why a test and a hook failed before the run's summary, a long message in full", {
  timeout: 150_000,
}, async () => {
  const { code, output } = await runProbe("test/setup/fixtures/failing/failing.config.ts", { NO_COLOR: "1" });
  expect(code).toBe(1);
  const summary = output.search(/Failed (Suites|Tests) \d/);
  expect(summary).toBeGreaterThan(0);
  const early = output.slice(0, summary);
  expect(early).toMatch(/\[failed\] \S*fails\.probe\.ts > a test > fails on purpose\n.*expected 2 to be 3/);
  expect(early).toMatch(/failed on purpose\nlog line 1\n(log line \d+\n){98}log line 100\n\s+at /);
  expect(early).toMatch(/\[failed\] \S*fails\.probe\.ts > a hook \(a hook\)\nError: the hook fails on purpose/);
});
