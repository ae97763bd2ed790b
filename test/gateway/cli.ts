// The openclaw CLI as the tests drive it: `openclaw <args>` on this Node inside the isolated environment, and
// `openclaw gateway call` for the gateway's RPCs. The CLI reads the gateway's port and token from the isolated
// config, so the token never appears on argv.

import { type CallResult, parseCliJson } from "./cli-output.js";
import { OPENCLAW_ENTRY } from "./openclaw.js";
import type { RunOptions, RunResult } from "./processes.js";

/** What the CLI wrapper needs from the harness: running a tracked child and describing its failure (redacted). */
export interface CommandRunner {
  /** The openclaw.mjs to run; the pinned one when absent. */
  readonly openclawEntry?: string;
  run(command: string, args: string[], options: RunOptions): Promise<RunResult>;
  describeFailure(what: string, result: RunResult): string;
}

/** Runs `openclaw <args>` (the runner's openclaw.mjs, by default the pinned one, on this Node). */
export function oc(runner: CommandRunner, args: string[], options: RunOptions): Promise<RunResult> {
  return runner.run(process.execPath, [runner.openclawEntry ?? OPENCLAW_ENTRY, ...args], options);
}

/** Like oc(), but throws (with redacted output) unless the command exits 0. */
export async function ocOk(runner: CommandRunner, args: string[], options: RunOptions): Promise<RunResult> {
  const result = await oc(runner, args, options);
  if (result.code !== 0) throw new Error(runner.describeFailure(`openclaw ${args.join(" ")}`, result));
  return result;
}

/**
 * `openclaw gateway call <method> --json` against the gateway on `port`. Exit 1 with `{ok:false,error}` means
 * the gateway answered with an error. The child gets 30 s beyond the call's own timeout to report it.
 */
export async function call<T>(
  runner: CommandRunner,
  port: number,
  method: string,
  params: unknown,
  timeoutMs: number,
): Promise<CallResult<T>> {
  const result = await oc(
    runner,
    [
      "gateway",
      "call",
      method,
      "--json",
      "--port",
      String(port),
      "--params",
      JSON.stringify(params),
      "--timeout",
      String(timeoutMs),
    ],
    { timeoutMs: timeoutMs + 30_000 },
  );
  return { ...result, json: parseCliJson<T>(result.stdout) };
}
