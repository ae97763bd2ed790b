// The `openclaw vercel-sandbox` command tree on the commander program OpenClaw hands the registrar. Every
// command prints a table, or one JSON document with --json; a failure prints what went wrong and what to do
// next, on stderr (as `{ "error": { message, remedy } }` on stdout with --json), and exits 1.
import { addGatewayClientOptions, callGatewayFromCli, type GatewayRpcOpts } from "openclaw/plugin-sdk/gateway-runtime";
import type { OpenClawPluginApi } from "openclaw/plugin-sdk/plugin-entry";
import { resolveStateDir } from "openclaw/plugin-sdk/state-paths";
import { messageOf } from "../infra/index.js";
import { ImageStore } from "../preparation/index.js";
import { LeaseLedger } from "../provider/index.js";
import { VercelClient } from "../vercel/index.js";
import { renderDoctor, runDoctor } from "./doctor.js";
import { CliError } from "./errors.js";
import type { GatewayCall } from "./gateway.js";
import { planGc, renderGc, runGc } from "./gc.js";
import { renderImages } from "./images.js";
import { observe } from "./observe.js";
import { installedOpenClawVersion } from "./openclaw-version.js";
import { vercelProfiles } from "./profiles.js";
import { buildStatus, renderStatus } from "./status.js";
import { indented } from "./table.js";
import { renderWarm, warmBaseImage } from "./warm.js";

type Registrar = Parameters<OpenClawPluginApi["registerCli"]>[0];
type CliContext = Parameters<Registrar>[0];
type Program = CliContext["program"];

export interface CommandContext {
  config: CliContext["config"];
  scopeOf(stateDir: string): string;
}

export interface Output<T> {
  json: T;
  text: string;
  /** Exit 1 although the command ran (a failed doctor check, a failed removal). */
  failed?: boolean;
}

type Options = GatewayRpcOpts & { json?: boolean; dryRun?: boolean };

/** The ledger reports a damaged file itself; in the CLI that report goes to stderr. */
const stderrLogger = { warn: (message: string) => process.stderr.write(`${message}\n`) };

function environment(context: CommandContext, options: Options) {
  const stateDir = resolveStateDir(process.env);
  const profiles = vercelProfiles(context.config, context.scopeOf(stateDir));
  const call: GatewayCall = (method, params, overrides = {}) =>
    callGatewayFromCli(
      method,
      {
        ...options,
        json: true,
        config: context.config,
        ...(overrides.timeoutMs !== undefined ? { timeout: String(overrides.timeoutMs) } : {}),
      } as GatewayRpcOpts,
      params,
      { progress: false, ...(overrides.signal ? { signal: overrides.signal } : {}) },
    );
  const ledger = LeaseLedger.inDirectory(stateDir, { logger: stderrLogger });
  return { stateDir, profiles, call, ledger, client: new VercelClient({ env: process.env }) };
}

/** Prints a command's result (or its failure, with the remedy) as a table or as JSON, and sets the exit code. */
export function run<T>(options: Options, work: () => Promise<Output<T>>): Promise<void> {
  return work().then(
    (out) => {
      process.stdout.write(`${options.json ? JSON.stringify(out.json, null, 2) : out.text}\n`);
      if (out.failed) process.exitCode = 1;
    },
    (error: unknown) => {
      const message = messageOf(error);
      const remedy =
        error instanceof CliError ? error.remedy : "Run `openclaw vercel-sandbox doctor` to find the cause";
      if (options.json) process.stdout.write(`${JSON.stringify({ error: { message, remedy } }, null, 2)}\n`);
      else process.stderr.write(`vercel-sandbox: ${indented(message, "  ")}\n  → ${indented(remedy, "    ")}\n`);
      process.exitCode = 1;
    },
  );
}

async function status(context: CommandContext, options: Options): Promise<Output<unknown>> {
  const { gateway, listings, tombstones } = await observe(environment(context, options));
  const report = buildStatus(gateway, listings, tombstones);
  return { json: report, text: renderStatus(report) };
}

async function images(): Promise<Output<unknown>> {
  const store = ImageStore.inDirectory(resolveStateDir(process.env), { logger: stderrLogger });
  const report = { images: await store.images(), diagnostics: await store.diagnostics() };
  return { json: report, text: renderImages(report, Date.now()) };
}

/**
 * Progress goes to stderr, so `--json` keeps stdout one document; Ctrl-C aborts the wait, and the gateway's
 * environment is destroyed all the same (its progress line says so; the error, when it could not be).
 */
async function warm(context: CommandContext, options: Options & { workerProfile?: string }): Promise<Output<unknown>> {
  const env = environment(context, options);
  const abort = new AbortController();
  const interrupt = () => abort.abort(new Error("interrupted (Ctrl-C)"));
  process.once("SIGINT", interrupt);
  try {
    const report = await warmBaseImage({
      ...(options.workerProfile !== undefined ? { profileId: options.workerProfile } : {}),
      config: context.config,
      pluginScope: context.scopeOf(env.stateDir),
      stateDir: env.stateDir,
      call: env.call,
      client: env.client,
      progress: (line) => process.stderr.write(`vercel-sandbox images warm: ${line}\n`),
      signal: abort.signal,
      openclawVersion: installedOpenClawVersion(),
    });
    return { json: report, text: renderWarm(report) };
  } finally {
    process.removeListener("SIGINT", interrupt);
  }
}

async function gc(context: CommandContext, options: Options): Promise<Output<unknown>> {
  const env = environment(context, options);
  if (env.profiles.length === 0) {
    throw new CliError("no cloudWorkers profile uses provider vercel-sandbox", "Add one, then run gc again");
  }
  const { gateway, listings, tombstones } = await observe(env);
  const store = ImageStore.inDirectory(env.stateDir, { logger: stderrLogger });
  const plan = planGc(gateway, listings, tombstones);
  const report = await runGc(plan, listings, { ledger: env.ledger, images: store }, !!options.dryRun);
  return { json: report, text: renderGc(report), failed: report.failed.length > 0 };
}

async function doctor(context: CommandContext, options: Options): Promise<Output<unknown>> {
  const env = environment(context, options);
  const report = await runDoctor({
    config: context.config,
    profiles: env.profiles,
    env: process.env,
    nodeVersion: process.version,
    client: env.client,
    gateway: env.call,
  });
  return { json: report, text: renderDoctor(report), failed: !report.ok };
}

export function addCommands(program: Program, context: CommandContext): void {
  const root = program
    .command("vercel-sandbox")
    .description("Inspect and tidy the Vercel Sandbox workers of this gateway");
  const withGateway = (command: Program) => addGatewayClientOptions(command, { timeoutMs: 15_000 });
  withGateway(root.command("status").description("Our leases: Vercel state, keepalive, idle clock, fence, deadline"))
    .option("--json", "Print JSON")
    .action((options: Options) => run(options, () => status(context, options)));
  const imagesCommand = root
    .command("images")
    .description("Warm images and the diagnostics of recent preparations")
    .option("--json", "Print JSON")
    .action((options: Options) => run(options, images));
  withGateway(
    imagesCommand
      .command("warm")
      .description("Build the base runtime image of a profile on the running gateway, ahead of the first dispatch"),
  )
    // Not `--profile`: OpenClaw's root option of that name selects a state dir and never reaches a plugin command.
    .option("--worker-profile <id>", "The cloudWorkers profile (default: the only vercel-sandbox one)")
    .option("--json", "Print JSON")
    .action((options: Options & { workerProfile?: string }) => run(options, () => warm(context, options)));
  withGateway(root.command("gc").description("Remove sandboxes of ours that no lease owns (only with proof)"))
    .option("--dry-run", "Report what would be removed; remove nothing")
    .option("--json", "Print JSON")
    .action((options: Options) => run(options, () => gc(context, options)));
  withGateway(root.command("doctor").description("Read-only checks, each with what to do next"))
    .option("--json", "Print JSON")
    .action((options: Options) => run(options, () => doctor(context, options)));
}
