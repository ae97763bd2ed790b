// Preparation's view of a sandbox: core's project transport (`runScript`, `upload`) and the preparation
// program's actions, all through the client seam's SandboxBox. Nothing here decides anything.
import { open } from "node:fs/promises";
import { redact } from "../infra/index.js";
import type { SandboxBox } from "../vercel/index.js";
import { PREPARATION_ENV, PREPARATION_PROGRAM, PROBED_COMMANDS, RECIPE_INPUTS, SCRUBBED_PATHS } from "./program.js";

/** Writes larger than this are split, so no single request carries a whole Git pack. */
const UPLOAD_CHUNK_BYTES = 64 * 1024 * 1024;
const SCRIPT_TIMEOUT_MS = 15 * 60_000;
/**
 * The preparation program's answer, read whole: `sync` carries the recipe inputs (lockfiles included) in
 * base64, which in a large repository run to several MiB. More than this fails as BoxOutputTooLargeError.
 */
const PROGRAM_OUTPUT_BYTES = 64 * 1024 * 1024;

export class PreparationStepError extends Error {
  override readonly name = "PreparationStepError";
  constructor(
    readonly step: string,
    message: string,
  ) {
    super(message);
  }
}

/** Core's transport for `project.prepare`: scripts run with `sh` as the sandbox's default user. */
export function projectTransport(box: SandboxBox) {
  return {
    async runScript(script: string, signal: AbortSignal): Promise<string> {
      // In the command, never a file on the box (the same rule as our own programs); core's scripts are small.
      const result = await box.run({ cmd: "sh", args: ["-c", script], timeoutMs: SCRIPT_TIMEOUT_MS, signal });
      if (result.exitCode !== 0) {
        const said = redact(`${result.stderr}`.trim()).slice(-2000);
        throw new PreparationStepError("project", `project preparation script exited ${result.exitCode}: ${said}`);
      }
      return result.stdout;
    },
    async upload(localPath: string, remotePath: string, signal: AbortSignal): Promise<void> {
      const handle = await open(localPath, "r");
      try {
        const { size } = await handle.stat();
        if (size <= UPLOAD_CHUNK_BYTES) {
          const content = await handle.readFile();
          await box.writeFiles([{ path: remotePath, content, mode: 0o600 }], signal);
          return;
        }
        const parts: string[] = [];
        for (let offset = 0; offset < size; offset += UPLOAD_CHUNK_BYTES) {
          const buffer = Buffer.alloc(Math.min(UPLOAD_CHUNK_BYTES, size - offset));
          await handle.read(buffer, 0, buffer.length, offset);
          const part = `${remotePath}.part-${String(parts.length).padStart(4, "0")}`;
          await box.writeFiles([{ path: part, content: buffer, mode: 0o600 }], signal);
          parts.push(part);
        }
        const joined = await box.run({
          cmd: "sh",
          args: ["-c", 'target="$1"; shift; cat "$@" > "$target" && rm -f "$@"', "sh", remotePath, ...parts],
          signal,
        });
        if (joined.exitCode !== 0) throw new PreparationStepError("project", `joining the uploaded parts failed`);
      } finally {
        await handle.close();
      }
    },
  };
}

export interface SyncResult {
  checkout: string;
  previous: { baseCommit: string; identity: string } | null;
  files: Record<string, string>;
  executables: string[];
  commands: Record<string, boolean>;
}

/** Runs one action of the preparation program. */
async function runProgram<T>(box: SandboxBox, input: Record<string, unknown>, signal?: AbortSignal): Promise<T> {
  const result = await box.run({
    cmd: "node",
    // In the command, never a file on the box (see the bootstrap program's PROGRAM_ARGV).
    args: ["--input-type=module", "--eval", PREPARATION_PROGRAM],
    env: { [PREPARATION_ENV]: JSON.stringify(input) },
    timeoutMs: SCRIPT_TIMEOUT_MS,
    signal,
    output: { keep: "whole", bytes: PROGRAM_OUTPUT_BYTES },
  });
  const line = `${result.stdout}`.trim().split("\n").pop() ?? "";
  let parsed: { ok?: boolean; result?: T; message?: string } = {};
  try {
    parsed = JSON.parse(line);
  } catch {
    // Reported below with what the program said on stderr.
  }
  if (parsed.ok === true && parsed.result !== undefined) return parsed.result;
  const message = parsed.message ?? `the preparation program ended without a result: ${`${result.stderr}`.slice(-500)}`;
  throw new PreparationStepError(String(input.action), redact(message));
}

export function syncCheckout(
  box: SandboxBox,
  at: { project: string; seedKey: string; baseCommit: string },
  signal?: AbortSignal,
): Promise<SyncResult> {
  return runProgram(box, { action: "sync", ...at, inputs: RECIPE_INPUTS, commands: PROBED_COMMANDS }, signal);
}

export function recordPreparation(
  box: SandboxBox,
  at: { project: string; baseCommit: string; identity: string },
  signal?: AbortSignal,
): Promise<{ recorded: boolean }> {
  return runProgram(box, { action: "record", ...at }, signal);
}

export function scrubBox(box: SandboxBox, signal?: AbortSignal): Promise<{ stopped: number; removed: string[] }> {
  return runProgram(box, { action: "scrub", remove: SCRUBBED_PATHS }, signal);
}
