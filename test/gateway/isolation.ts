// The isolated world one harness runs openclaw in: a temp run dir holding HOME, the state dir, the config,
// TMPDIR and the logs, and the environment that points openclaw (and npm) there and nowhere else, so a test
// neither reads nor writes the developer's or CI's own OpenClaw state.

import { existsSync } from "node:fs";
import fs from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { isolatedOpenClawEnv } from "../../src/main-job/openclaw-env.js";
import { NPM_CACHE } from "./openclaw.js";
import { tmpViewOf, viewPaths } from "./private-tmp.js";

export interface RunLayout {
  readonly runDir: string;
  readonly homeDir: string;
  readonly stateDir: string;
  readonly configPath: string;
  readonly tmpDir: string;
  readonly logsDir: string;
  /** The gateway process's stdout and stderr. */
  readonly gatewayOutPath: string;
  /** openclaw's own file log (config `logging.file`). */
  readonly openclawLogPath: string;
}

/** The only variables children inherit: what running node/npm needs (and reaching the npm registry). */
const INHERITED_ENV = [
  "PATH",
  "LANG",
  "LC_ALL",
  "TZ",
  "NODE_EXTRA_CA_CERTS",
  "SSL_CERT_FILE",
  "HTTP_PROXY",
  "HTTPS_PROXY",
  "NO_PROXY",
  "http_proxy",
  "https_proxy",
  "no_proxy",
  "npm_config_registry",
];

/** Creates a fresh run dir (private subdirectories) and the shared npm cache. */
export async function createRunLayout(): Promise<RunLayout> {
  const runDir = await fs.mkdtemp(path.join(os.tmpdir(), "ocgw-test-"));
  const stateDir = path.join(runDir, "state");
  const logsDir = path.join(runDir, "logs");
  const layout: RunLayout = {
    runDir,
    homeDir: path.join(runDir, "home"),
    stateDir,
    configPath: path.join(stateDir, "openclaw.json"),
    tmpDir: path.join(runDir, "tmp"),
    logsDir,
    gatewayOutPath: path.join(logsDir, "gateway.out"),
    openclawLogPath: path.join(logsDir, "openclaw.log"),
  };
  for (const dir of [layout.homeDir, layout.stateDir, layout.tmpDir, layout.logsDir]) {
    await fs.mkdir(dir, { recursive: true, mode: 0o700 });
  }
  // The run's own copies of the directories OpenClaw keeps in /tmp (private-tmp.ts), private as OpenClaw makes them.
  await fs.mkdir(tmpViewOf(runDir), { mode: 0o700 });
  for (const dir of Object.values(viewPaths(runDir))) await fs.mkdir(dir, { mode: 0o700 });
  await fs.mkdir(NPM_CACHE, { recursive: true });
  return layout;
}

/** Isolation environment from the reference note (docs/help/environment.md, docs/gateway/multiple-gateways.md). */
export function isolatedEnv(layout: RunLayout): Record<string, string> {
  const env: Record<string, string> = {};
  // Inherit only what a process needs to run; nothing else from the developer's or CI's environment.
  for (const key of INHERITED_ENV) {
    const value = process.env[key];
    if (value !== undefined) env[key] = value;
  }
  // HOME moves into the run dir, so point npm at the real user npmrc (registry, CA settings) if there is one.
  const userNpmrc = process.env.npm_config_userconfig ?? path.join(os.homedir(), ".npmrc");
  if (existsSync(userNpmrc)) env.npm_config_userconfig = userNpmrc;
  // The node that runs this test is ≥ 22.22.3 (checked before the run dir exists); make it the first `node` on
  // PATH so lifecycle scripts and `npm` children use it too.
  env.PATH = [path.dirname(process.execPath), env.PATH ?? ""].filter(Boolean).join(path.delimiter);
  const dirs = {
    home: layout.homeDir,
    stateDir: layout.stateDir,
    configPath: layout.configPath,
    tmpDir: layout.tmpDir,
  };
  Object.assign(env, isolatedOpenClawEnv(dirs), {
    npm_config_cache: NPM_CACHE,
    npm_config_update_notifier: "false",
    npm_config_fund: "false",
    npm_config_audit: "false",
  });
  return env;
}

/** Removes the run dir, unless OPENCLAW_GATEWAY_TEST_KEEP=1 asks to keep it for a post-mortem. */
export async function removeRunDir(runDir: string): Promise<void> {
  if (process.env.OPENCLAW_GATEWAY_TEST_KEEP === "1") {
    process.stderr.write(`[gateway harness] kept ${runDir} (OPENCLAW_GATEWAY_TEST_KEEP=1)\n`);
    return;
  }
  await fs.rm(runDir, { recursive: true, force: true, maxRetries: 3 });
}
