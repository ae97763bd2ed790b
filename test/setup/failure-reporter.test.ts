// The failure reporter: a run whose test and whose hook fail prints each reason as it happens, before vitest's
// own summary at the end.
import path from "node:path";
import { expect, it } from "vitest";
import { REPO_ROOT } from "../gateway/openclaw.js";
import { ChildProcesses } from "../gateway/processes.js";

const processes = new ChildProcesses((text) => text);

it("prints why a test and a hook failed before the run's summary", { timeout: 150_000 }, async () => {
  const result = await processes.run(
    process.execPath,
    [
      path.join(REPO_ROOT, "node_modules/vitest/vitest.mjs"),
      "run",
      "--config",
      "test/setup/fixtures/failing/failing.config.ts",
    ],
    { cwd: REPO_ROOT, env: { ...process.env, FORCE_COLOR: "0", NO_COLOR: "1" }, timeoutMs: 120_000 },
  );
  const output = result.stdout + result.stderr;
  expect(result.code).toBe(1);
  const summary = output.search(/Failed (Suites|Tests) \d/);
  expect(summary).toBeGreaterThan(0);
  const early = output.slice(0, summary);
  expect(early).toMatch(/\[failed\] \S*fails\.probe\.ts > a test > fails on purpose\n.*expected 2 to be 3/);
  expect(early).toMatch(/\[failed\] \S*fails\.probe\.ts > a hook \(a hook\)\nError: the hook fails on purpose/);
});
