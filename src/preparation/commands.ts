// Runs devcontainer lifecycle phases on a sandbox (seed 002 "Each lifecycle command supports these forms").
// A string runs through /bin/sh, an array is exec'd with no shell, and an object runs its named commands in
// parallel: every one runs to completion and the phase succeeds only if all do. Each command runs as the
// sandbox's default user in the prepared checkout, with a minimal setup environment plus the recipe's
// containerEnv/remoteEnv; nothing is written to profile files, so that environment reaches no other process.
import type { LifecycleCommand, PhaseName, Recipe, SingleCommand } from "../devcontainer/index.js";
import { redact } from "../infra/index.js";
import type { SandboxBox } from "../vercel/index.js";
import { capTail, OUTPUT_TAIL_BYTES } from "./diagnostics.js";
import type { PhaseReport } from "./types.js";

export interface LifecycleContext {
  box: SandboxBox;
  /** The prepared checkout on the sandbox. */
  cwd: string;
  recipe: Pick<Recipe, "env" | "unset">;
  /** Cancels the run: a cancelled command rejects rather than reporting a failed phase. */
  signal?: AbortSignal;
  /** Per phase; DEFAULT_PHASE_TIMEOUT_MS when absent. */
  timeoutMs?: number;
}

export interface PhaseOutcome extends PhaseReport {
  /** Why the phase failed, in one line; absent when it succeeded. */
  reason?: string;
  /** Redacted combined output of the failed command(s), at most 16 KiB; empty when the phase succeeded. */
  outputTail: string;
}

const DEFAULT_PHASE_TIMEOUT_MS = 30 * 60_000;

/**
 * The part of the box's own environment lifecycle commands keep: what a login of its default user gives
 * (identity, locale, search path), the CA bundle Node is told to trust, and the proxy the box reaches the
 * network through when it has one. Everything else the sandbox sets is dropped.
 */
const SETUP_ENV_NAMES = [
  "PATH",
  "HOME",
  "USER",
  "LOGNAME",
  "SHELL",
  "LANG",
  "LC_ALL",
  "TZ",
  "TMPDIR",
  "NODE_EXTRA_CA_CERTS",
  "SSL_CERT_FILE",
  "HTTP_PROXY",
  "HTTPS_PROXY",
  "NO_PROXY",
  "http_proxy",
  "https_proxy",
  "no_proxy",
  "NODE_USE_ENV_PROXY",
] as const;

// The box answers after the command's own timeout; this is only for an answer that never comes.
const ANSWER_GRACE_MS = 30_000;
/**
 * Output the gateway holds for one phase while its commands run, shared by its parallel members; each keeps
 * the tail of each stream, more than its share of the report so redaction sees past where the report cuts.
 */
const PHASE_KEPT_BYTES = 1024 * 1024;
const MEMBER_KEPT_BYTES = { min: 2048, max: 4 * OUTPUT_TAIL_BYTES };
const LABEL_CHARS = 80;

/** Runs the phases in order and stops at the first that fails. Phases the recipe lacks are skipped. */
export async function runPhases(
  phases: readonly PhaseName[],
  recipe: Recipe,
  context: Omit<LifecycleContext, "recipe">,
): Promise<{ reports: PhaseOutcome[]; failed?: PhaseOutcome }> {
  const reports: PhaseOutcome[] = [];
  for (const phase of phases) {
    const command = recipe.phases[phase];
    if (!command) continue;
    const outcome = await runPhase(phase, command, { ...context, recipe });
    reports.push(outcome);
    if (!outcome.ok) return { reports, failed: outcome };
  }
  return { reports };
}

interface Finished {
  /** The parallel member's name, or a short form of the command. */
  label: string;
  exitCode: number | undefined;
  timedOut: boolean;
  /** The kept tail of the command's output. */
  output: string;
  /** Bytes of output before the kept tail. */
  dropped: number;
}

export async function runPhase(
  phase: PhaseName,
  command: LifecycleCommand,
  context: LifecycleContext,
): Promise<PhaseOutcome> {
  const timeoutMs = context.timeoutMs ?? DEFAULT_PHASE_TIMEOUT_MS;
  const started = Date.now();
  const members: [string, SingleCommand][] =
    command.kind === "parallel" ? Object.entries(command.commands) : [[labelOf(command), command]];
  const { min, max } = MEMBER_KEPT_BYTES;
  const keptBytes = Math.max(min, Math.min(max, Math.floor(PHASE_KEPT_BYTES / members.length / 2)));
  // allSettled: a parallel member that fails still lets the others run to completion before anything throws.
  const settled = await Promise.allSettled(
    members.map(([label, single]) => runSingle(label, single, context, timeoutMs, keptBytes)),
  );
  const rejected = settled.find((result) => result.status === "rejected");
  if (rejected) throw rejected.reason;
  const finished = settled.map((result) => (result as PromiseFulfilledResult<Finished>).value);
  const ms = Date.now() - started;
  const failures = finished.filter((run) => run.timedOut || run.exitCode !== 0);
  if (failures.length === 0) return { phase, ms, ok: true, outputTail: "" };

  const failed = failures.map((run) => run.label).join(", ");
  const exitCode = failures.length === 1 ? failures[0]!.exitCode : undefined;
  return {
    phase,
    ms,
    ok: false,
    failed,
    ...(exitCode === undefined ? {} : { exitCode }),
    reason: reasonOf(phase, command, failures, timeoutMs),
    outputTail: tailOf(failures, command.kind === "parallel"),
  };
}

async function runSingle(
  label: string,
  command: SingleCommand,
  context: LifecycleContext,
  timeoutMs: number,
  keptBytes: number,
): Promise<Finished> {
  const watchdog = AbortSignal.timeout(timeoutMs + ANSWER_GRACE_MS);
  const signal = context.signal ? AbortSignal.any([context.signal, watchdog]) : watchdog;
  const started = Date.now();
  try {
    const result = await context.box.run({
      cmd: "/bin/sh",
      args: ["-c", setupScript(context.recipe.unset), "sh", ...invocationOf(command, context.recipe.env)],
      cwd: context.cwd,
      timeoutMs,
      signal,
      output: { keep: "tail", bytes: keptBytes },
    });
    // The box kills a command at its timeout; a non-zero exit at or past it is that kill.
    const timedOut = result.exitCode !== 0 && Date.now() - started >= timeoutMs;
    const dropped = result.dropped.stdout + result.dropped.stderr;
    return { label, exitCode: result.exitCode, timedOut, output: result.stdout + result.stderr, dropped };
  } catch (error) {
    if (!watchdog.aborted || context.signal?.aborted) throw error;
    return { label, exitCode: undefined, timedOut: true, output: "", dropped: 0 };
  }
}

/**
 * The script the box runs first: it sends stderr to stdout (so the output keeps its order), keeps only the
 * setup variables the box has and the recipe does not remove, and execs `env -i` with those, then the
 * recipe's own assignments (which win), then the command. Only our constant names appear in the script.
 */
function setupScript(unset: readonly string[]): string {
  const kept = SETUP_ENV_NAMES.filter((name) => !unset.includes(name));
  // Prepending in reverse leaves the assignments in SETUP_ENV_NAMES order, ahead of the recipe's.
  const prepend = kept.toReversed().map((name) => `if [ -n "\${${name}+x}" ]; then set -- "${name}=$${name}" "$@"; fi`);
  return ["exec 2>&1", ...prepend, 'exec /usr/bin/env -i -- "$@"'].join("\n");
}

/** The recipe's assignments, then the command, as arguments of `env`. Recipe values are literal and non-secret. */
function invocationOf(command: SingleCommand, env: Readonly<Record<string, string>>): string[] {
  const assignments = Object.entries(env).map(([name, value]) => `${name}=${value}`);
  if (command.kind === "shell") return [...assignments, "/bin/sh", "-c", command.command];
  // env takes any word with "=" as an assignment; such an executable is started by a shell's exec instead,
  // which runs it as named without interpreting any argument.
  const exec = command.argv[0]!.includes("=") ? ["/bin/sh", "-c", 'exec "$@"', "sh"] : [];
  return [...assignments, ...exec, ...command.argv];
}

function labelOf(command: SingleCommand): string {
  const text = command.kind === "shell" ? command.command : command.argv.join(" ");
  const line = redact(text).replace(/\s+/g, " ").trim();
  return line.length > LABEL_CHARS ? `${line.slice(0, LABEL_CHARS - 1)}…` : line;
}

function reasonOf(phase: PhaseName, command: LifecycleCommand, failures: Finished[], timeoutMs: number): string {
  const each = failures.map((run) => {
    const what = command.kind === "parallel" ? `command ${run.label}` : `\`${run.label}\``;
    if (run.timedOut) return `${what} timed out after ${spelled(timeoutMs)}`;
    return `${what} exited with code ${run.exitCode}`;
  });
  const of = command.kind === "parallel" ? ` (of ${Object.keys(command.commands).length} parallel commands)` : "";
  return `${phase} failed: ${each.join("; ")}${of}`;
}

function spelled(ms: number): string {
  return ms >= 60_000 && ms % 60_000 === 0 ? `${ms / 60_000} min` : `${Math.round(ms / 1000)} s`;
}

// Redaction sees the whole output before it is cut, so a secret is never cut into an unrecognisable piece.
function tailOf(failures: Finished[], labelled: boolean): string {
  if (!labelled) return tailWithin(failures[0]!, OUTPUT_TAIL_BYTES);
  // Each failed member gets an equal share, so one noisy command cannot hide the others' output.
  const share = Math.floor(OUTPUT_TAIL_BYTES / failures.length);
  const sections = failures.map((run) => {
    const header = `--- ${redact(run.label)} (${run.timedOut ? "timed out" : `exit ${run.exitCode}`}) ---\n`;
    return header + tailWithin(run, Math.max(0, share - Buffer.byteLength(header)));
  });
  // Headers alone could pass the budget when very many members fail.
  return capTail(sections.join(""), OUTPUT_TAIL_BYTES);
}

// Room for our own omission marker: its fixed text and a count of up to 16 digits.
const MARKER_ROOM = 48;

/** The run's redacted tail in `bytes`; the omission marker counts what the box dropped as well. */
function tailWithin(run: Finished, bytes: number): string {
  if (run.dropped === 0) return capTail(redact(run.output), bytes);
  const cut = capTail(redact(run.output), Math.max(0, bytes - MARKER_ROOM));
  const marker = /^\[… (\d+) earlier bytes omitted\]\n/.exec(cut);
  const omitted = run.dropped + Number(marker?.[1] ?? 0);
  return `[… ${omitted} earlier bytes omitted]\n${cut.slice(marker?.[0].length ?? 0)}`;
}
