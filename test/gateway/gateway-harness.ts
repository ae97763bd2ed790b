// Real-gateway test harness: runs the installed `openclaw@2026.9.2` CLI and gateway (or, when asked, a later
// 2026.9.x installed side by side, see versions.ts) on this Node (≥ 22.22.3) against a fresh, fully isolated state directory, with the packed plugin installed as a user would install it.
// This class assembles the single-purpose parts beside it and keeps the rules that span them:
// - Every child process is spawned through one ChildProcesses (own process group, environment-tagged) and
//   ended with everything it started when it exits or times out; dispose() ends whatever is still running.
// - Everything lives under one temp run dir (removed in dispose()), OpenClaw's directories in /tmp included: each
//   child sees the run dir's own /tmp/openclaw (from 2026.9.3 on, its node-runtime archives, whatever TMPDIR says)
//   and lock-coordinator dir (private-tmp.ts). Where that cannot apply, dispose() removes the lock coordinators
//   from the host's /tmp by name. The npm download cache under <repo>/.cache only speeds up later runs.
// - The gateway token lives only in the isolated config (by design: `gateway call --port` reads it from there,
//   so it is never on argv or in an environment); the Vercel token is only ever put into the gateway process's
//   environment (StartOptions.env). All text this harness returns or throws goes through redact().

import { createHash, randomBytes, X509Certificate } from "node:crypto";
import { readFile } from "node:fs/promises";
import path from "node:path";
import { sharedInRun } from "../support/run-cache.js";
import { type SecretScan, scanForSecret } from "../support/secret-scan.js";
import * as cli from "./cli.js";
import { type CallResult, describeFailure } from "./cli-output.js";
import { initialConfig, readConfig, writeConfig, writePatchFile } from "./config.js";
import { freePort } from "./free-port.js";
import { GatewayProcess, type StartOptions } from "./gateway-process.js";
import { createRunLayout, isolatedEnv, type RunLayout, removeRunDir } from "./isolation.js";
import { assertOpenClawRunnable, defaultOpenClawVersion, PINNED_OPENCLAW_VERSION, REPO_ROOT } from "./openclaw.js";
import { installPlugin, packPlugin } from "./plugin-package.js";
import { applyTemplate, captureTemplate } from "./plugin-template.js";
import { inPrivateTmp, privateTmpApplies, tmpViewOf } from "./private-tmp.js";
import { ChildProcesses, type RunOptions, type RunResult } from "./processes.js";
import { Redactor } from "./redactor.js";
import { GatewayRpc } from "./rpc.js";
import { removeLockCoordinators } from "./state-locks.js";
import { ensureOpenClaw } from "./versions.js";

async function sha256Of(file: string): Promise<string> {
  return createHash("sha256")
    .update(await readFile(file))
    .digest("hex");
}

export interface HarnessOptions {
  /** The openclaw release to run: 2026.9.2 (the repo's devDependency) unless the spec asks for a later 2026.9.x. */
  openclawVersion?: string;
}

export class GatewayHarness implements cli.CommandRunner {
  readonly runDir: string;
  readonly homeDir: string;
  readonly stateDir: string;
  readonly configPath: string;
  readonly tmpDir: string;
  readonly logsDir: string;
  readonly port: number;
  readonly openclawVersion: string;
  readonly openclawEntry: string;
  readonly timings: Record<string, number> = {};
  /** Where this harness's children's /tmp/openclaw and lock dir are (private-tmp.ts); undefined: the host's. */
  readonly tmpView: string | undefined;
  readonly #layout: RunLayout;
  readonly #redactor = new Redactor();
  readonly #processes: ChildProcesses;
  readonly #gateway: GatewayProcess;
  /** The persistent client of the running gateway (rpc.ts); none while it is stopped. */
  #rpc: GatewayRpc | undefined;
  /** Whether the running gateway has answered a call through the CLI yet (the first call of each start does). */
  #cliProven = false;
  #disposed = false;

  private constructor(layout: RunLayout, port: number, token: string, version: string, entry: string) {
    ({
      runDir: this.runDir,
      homeDir: this.homeDir,
      stateDir: this.stateDir,
      configPath: this.configPath,
      tmpDir: this.tmpDir,
      logsDir: this.logsDir,
    } = layout);
    this.#layout = layout;
    this.port = port;
    this.openclawVersion = version;
    this.openclawEntry = entry;
    this.#redactor.add(token);
    // Children see the run dir's own copies of OpenClaw's directories in /tmp where they can (private-tmp.ts).
    const applies = privateTmpApplies();
    this.#processes = new ChildProcesses(
      this.#redactor.redact,
      applies ? (command, args) => inPrivateTmp(layout.runDir, command, args) : undefined,
    );
    this.tmpView = applies ? tmpViewOf(layout.runDir) : undefined;
    this.#gateway = new GatewayProcess(this.#processes, layout, port, this.#redactor, this.timings, entry);
  }

  /** Creates the isolated run directory and the minimal local-gateway config (loopback, token auth, file log). */
  static async create(options: HarnessOptions = {}): Promise<GatewayHarness> {
    const version = options.openclawVersion ?? defaultOpenClawVersion();
    const entry = await ensureOpenClaw(version);
    assertOpenClawRunnable(entry, version);
    const layout = await createRunLayout();
    try {
      const token = randomBytes(24).toString("hex");
      const harness = new GatewayHarness(layout, await freePort(), token, version, entry);
      await writeConfig(layout.configPath, initialConfig(harness.port, token, layout.openclawLogPath));
      return harness;
    } catch (error) {
      // No harness to dispose of yet: the run dir is removed here.
      await removeRunDir(layout.runDir);
      throw error;
    }
  }

  /** Replaces every secret this harness knows about. Use on any text that leaves the harness. */
  redact(text: string): string {
    return this.#redactor.redact(text);
  }

  /** The isolated environment every child gets (see isolation.ts). */
  baseEnv(): Record<string, string> {
    return isolatedEnv(this.#layout);
  }

  /** Spawns a tracked child in its own process group and collects its output (bounded by timeoutMs). */
  run(command: string, args: string[], options: RunOptions): Promise<RunResult> {
    this.#assertLive();
    return this.#processes.run(command, args, {
      timeoutMs: options.timeoutMs,
      cwd: options.cwd ?? this.runDir,
      env: { ...this.baseEnv(), ...options.env },
    });
  }

  /** Runs `openclaw <args>` with this harness's isolated environment. */
  oc(args: string[], options: RunOptions): Promise<RunResult> {
    return cli.oc(this, args, options);
  }

  /** Like oc(), but throws (with redacted output) unless the command exits 0. */
  ocOk(args: string[], options: RunOptions): Promise<RunResult> {
    return cli.ocOk(this, args, options);
  }

  describeFailure(what: string, result: RunResult): string {
    return this.redact(describeFailure(what, result));
  }

  /** `npm pack` of the (already built) repo into the run dir; returns the tarball path. */
  packPlugin(dir = REPO_ROOT, timeoutMs = 120_000): Promise<string> {
    return packPlugin(this, path.join(this.runDir, "pack"), dir, timeoutMs);
  }

  /**
   * The packed plugin installed as `openclaw plugins install npm-pack:<tgz> --force --accept-capabilities` leaves
   * it (also enabled). The first harness of a run to install this tarball into this OpenClaw version runs that
   * command and keeps the state it left; later ones get a copy of it (plugin-template.ts), unless `real` asks for
   * the command itself (the spec that proves the install).
   */
  async installPlugin(tarball: string, timeoutMs = 240_000, options: { real?: boolean } = {}): Promise<RunResult> {
    const started = performance.now();
    const real = () => installPlugin(this, tarball, timeoutMs);
    let result: RunResult | undefined;
    const shared = options.real
      ? undefined
      : await sharedInRun(`plugin-${this.openclawVersion}-${await sha256Of(tarball)}`, async (staging) => {
          result = await real();
          await captureTemplate(this, staging);
        });
    if (!shared) result = await real();
    else if (!shared.made) await applyTemplate(shared.dir, this);
    const ms = Math.round(performance.now() - started);
    this.timings.pluginInstallMs = ms;
    this.timings.pluginInstallFromTemplate = result ? 0 : 1;
    return result ?? { code: 0, signal: null, stdout: "", stderr: "", ms, timedOut: false };
  }

  /** Writes `patch` to a JSON5-compatible file and applies it with `openclaw config patch --file`. */
  async patchConfig(patch: unknown, timeoutMs = 60_000): Promise<RunResult> {
    const file = await writePatchFile(this.runDir, patch);
    return this.ocOk(["config", "patch", "--file", file], { timeoutMs });
  }

  readConfig(): Promise<Record<string, unknown>> {
    return readConfig(this.configPath);
  }

  writeConfig(config: Record<string, unknown>): Promise<void> {
    return writeConfig(this.configPath, config);
  }

  get gatewayPid(): number | undefined {
    return this.#gateway.pid;
  }

  get gatewayLogPath(): string {
    return this.#layout.gatewayOutPath;
  }

  /** Starts `openclaw gateway run` and waits for /healthz and /readyz. */
  async startGateway(options: StartOptions = {}): Promise<void> {
    this.#assertLive();
    // A later release loads more before /healthz (2026.9.6: 78 s measured on a busy 2-core machine).
    const timeoutMs = options.timeoutMs ?? (this.openclawVersion === PINNED_OPENCLAW_VERSION ? undefined : 300_000);
    await this.#gateway.start(this.baseEnv(), { ...options, timeoutMs });
    const tls = options.tlsCertPem ? new X509Certificate(options.tlsCertPem).fingerprint256 : undefined;
    this.#rpc = await GatewayRpc.connect(
      this.#processes,
      {
        sdk: path.join(path.dirname(this.openclawEntry), "dist", "plugin-sdk", "gateway-runtime.js"),
        configPath: this.configPath,
        url: `${tls ? "wss" : "ws"}://127.0.0.1:${this.port}`,
        ...(tls ? { tlsFingerprint: tls.replaceAll(":", "").toLowerCase() } : {}),
        cwd: this.runDir,
        env: this.baseEnv(),
      },
      this.#redactor.redact,
    );
  }

  httpStatus(pathname: string, headers: Record<string, string> = {}): Promise<number> {
    return this.#gateway.httpStatus(pathname, headers);
  }

  gatewayLogTail(lines = 60): Promise<string> {
    return this.#gateway.logTail(lines);
  }

  /** The gateway's stdout/stderr and its file log so far (redacted). */
  gatewayLogText(): Promise<string> {
    return this.#gateway.logText();
  }

  /**
   * Scans every file under the run dir (state, config, logs, tmp, tarballs; node_modules skipped) for `needle`
   * with the one secret scan (test/support/secret-scan.ts): the files that contain it and how many were read.
   * Throws on a file it cannot read, and when it does not find the canary it plants.
   */
  scanForSecret(needle: string): Promise<SecretScan> {
    return scanForSecret(this.runDir, needle, {
      skip: [{ name: "node_modules", why: "packages npm installed from the registry before the run held a secret" }],
      // The gateway runs while it is scanned: a file it renamed or removed since the listing is read under its new
      // name, or is gone with what it held.
      tolerate: { ENOENT: "the running gateway renamed or removed it while the scan walked" },
    });
  }

  /**
   * The gateway RPC `method`, answered as `openclaw gateway call <method> --json` answers: the exit code and the
   * parsed JSON; exit 1 with `{ok:false,error}` means the gateway answered with an error. While the gateway this
   * harness started runs, it goes over the persistent client (rpc.ts), but for the first call of each start;
   * otherwise, and that first call, through the CLI (cliCall).
   */
  call<T = unknown>(method: string, params: unknown = {}, timeoutMs = 30_000): Promise<CallResult<T>> {
    if (this.#rpc && this.#cliProven) return this.#rpc.call<T>(method, params, timeoutMs);
    // The first call of each gateway start goes through the CLI, so every spec keeps proving that path too.
    this.#cliProven = this.#rpc !== undefined;
    return this.cliCall<T>(method, params, timeoutMs);
  }

  /** call() that throws unless the gateway answered successfully. */
  async callOk<T = unknown>(method: string, params: unknown = {}, timeoutMs = 30_000): Promise<T> {
    const result = await this.call<T>(method, params, timeoutMs);
    if (result.code !== 0 || result.json === undefined) {
      throw new Error(this.describeFailure(`gateway call ${method}`, result));
    }
    return result.json;
  }

  /**
   * `openclaw gateway call <method> --json` against this gateway, a CLI process of its own. The CLI reads the port
   * and the token from the isolated config, so the token never appears on argv.
   */
  cliCall<T = unknown>(method: string, params: unknown = {}, timeoutMs = 30_000): Promise<CallResult<T>> {
    return cli.call<T>(this, this.port, method, params, timeoutMs);
  }

  /** Kills the gateway with SIGKILL, as a crash would (no shutdown handlers run). */
  async killGateway(): Promise<void> {
    await this.#gateway.kill();
    await this.#stopRpc();
  }

  /** Stops the gateway (SIGTERM, then SIGKILL after graceMs). */
  async stopGateway(graceMs = 10_000): Promise<void> {
    await this.#stopRpc();
    await this.#gateway.stop(graceMs);
  }

  async #stopRpc(): Promise<void> {
    const rpc = this.#rpc;
    this.#rpc = undefined;
    this.#cliProven = false;
    await rpc?.stop();
  }

  /** Kills every child this harness started, removes the lock coordinators and the run dir. Idempotent. */
  async dispose(): Promise<void> {
    if (this.#disposed) return;
    this.#disposed = true;
    try {
      await this.stopGateway();
    } finally {
      try {
        await this.#processes.terminateAll();
        await removeLockCoordinators(this.stateDir);
      } finally {
        await removeRunDir(this.runDir);
      }
    }
  }

  #assertLive(): void {
    if (this.#disposed) throw new Error("gateway harness already disposed");
  }
}
