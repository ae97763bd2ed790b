// `openclaw-vercel-sandbox start` (what `npm start` runs): says which backend it targets, runs the main job,
// ends everything it started on Ctrl-C, and exits 0 only when the whole cycle ran and nothing was left behind.
import { messageOf } from "../infra/index.js";
import { backendFrom, VERCEL_NOT_RUN } from "./backend.js";
import { defaultCacheDir } from "./cache.js";
import { CODEX_GATEWAY_VERSION, CODEX_PLUGIN_SPEC } from "./codex-config.js";
import { terminalLine } from "./live.js";
import type { Log } from "./report.js";
import { startMainJob } from "./run.js";
import { onInterrupt } from "./teardown.js";
import type { AgentMode } from "./topology.js";

const INTRO = [
  "openclaw-vercel-sandbox main job: seed 000's cycle on this machine.",
  "  VM1 (a sandbox) runs the real OpenClaw gateway with this plugin; a host in front of it hands messages over;",
  "  a scripted model makes the agent run a command on VM2 (a worker sandbox our provider allocates and enrolls);",
  "  a cron job added meanwhile is due after VM1 idles and sleeps to a checkpoint: the host wakes VM1 for it",
  "  (scheduled wake), the job runs, VM1 sleeps again, and a third message wakes it. Takes 9-13 minutes.",
  "  A rerun reuses VM1's image from .cache/main-job/ when the gateway version and the packed plugin are unchanged;",
  "  --fresh discards that cache and builds everything.",
];

const CODEX_INTRO = [
  `  --codex: the agent is Codex (its app-server on VM1, openclaw ${CODEX_GATEWAY_VERSION} with ${CODEX_PLUGIN_SPEC}); the`,
  "  commands it makes run on VM2 by remote-exec, through the managed exec-server the gateway launches there after",
  "  an approval (VM1's approvals client allows each launch once). Its rerun cache is .cache/main-job-codex/.",
];

export async function runStartCommand(argv: string[], log: Log = (line) => process.stdout.write(`${line}\n`)) {
  const keep = argv.includes("--keep");
  // A rerun reuses what the last one built when its inputs are unchanged; --fresh discards that first.
  // `npm start -- --fresh` reaches this process as npm's config (npm_config_fresh), not as an argument; so does
  // --codex.
  const fresh = argv.includes("--fresh") || process.env.npm_config_fresh === "true";
  const mode: AgentMode = argv.includes("--codex") || process.env.npm_config_codex === "true" ? "codex" : "worker-turn";
  const reuse = { dir: defaultCacheDir(mode === "codex" ? "main-job-codex" : undefined), fresh };
  const backend = backendFrom(process.env);
  for (const line of INTRO) log(line);
  if (mode === "codex") for (const line of CODEX_INTRO) log(line);
  if (backend.kind === "vercel") {
    const scope = backend.teamId ? `, team ${backend.teamId}, project ${backend.projectId}` : "";
    log(`Vercel credentials found (${backend.auth}${scope}): the main job targets Vercel, not the emulator.`);
    for (const [step, why] of VERCEL_NOT_RUN) log(`○ ${step}: not run here: ${why}`);
    log("Nothing was created. Unset VERCEL_OIDC_TOKEN and VERCEL_TOKEN to run the whole cycle on the emulator.");
    return 2;
  }
  log("No Vercel credentials in the environment: the sandboxes run on the embedded emulator (real Linux processes).");
  // On a terminal, message 1's provision phase is one line rewritten in place; elsewhere a plain line per phase.
  // Every other line clears the status line first, so nothing is printed after it.
  const status = process.stdout.isTTY ? terminalLine(process.stdout) : undefined;
  const job = startMainJob(
    status
      ? {
          keep,
          reuse,
          mode,
          live: status,
          log: (line) => {
            status.end();
            log(line);
          },
        }
      : { log, keep, reuse, mode },
  );
  const unsubscribe = onInterrupt((signal) => {
    log(`${signal}: ending everything the main job started…`);
    void job.stop().then((failed) => process.exit(failed.length === 0 ? 130 : 1));
  });
  try {
    const result = await job.done;
    if (keep) {
      unsubscribe();
      log("--keep: the emulator, its sandboxes and snapshots stay until you press Ctrl-C.");
      await new Promise<void>((resolve) => onInterrupt(() => resolve()));
      log("ending everything the main job started…");
      const failed = await job.stop();
      return failed.length === 0 ? 0 : 1;
    }
    const clean = result.summary.sandboxesLeft === 0 && result.summary.snapshotsLeft === 0;
    if (!clean) log("✗ something was left behind (see the summary)");
    return clean ? 0 : 1;
  } catch (error) {
    log(`✗ main job failed: ${messageOf(error)}`);
    return 1;
  } finally {
    unsubscribe();
  }
}
