// One vitest run of a probe config (test/setup/fixtures), as a spec of the test setup runs it: its exit code and
// its whole output, with colours off.
import path from "node:path";
import { REPO_ROOT } from "../gateway/openclaw.js";
import { ChildProcesses } from "../gateway/processes.js";

const processes = new ChildProcesses((text) => text);

export async function runProbe(config: string, env: Record<string, string> = {}) {
  const result = await processes.run(
    process.execPath,
    [path.join(REPO_ROOT, "node_modules/vitest/vitest.mjs"), "run", "--config", config],
    { cwd: REPO_ROOT, env: { ...process.env, FORCE_COLOR: "0", ...env }, timeoutMs: 120_000 },
  );
  return { code: result.code, output: result.stdout + result.stderr };
}
