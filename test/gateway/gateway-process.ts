// The gateway's lifecycle: `openclaw gateway run` on the isolated loopback port, ready once /healthz and then
// /readyz answer 200, stopped by process group. Its output goes to a log file, not to memory, because a
// gateway serves a whole test file and failures quote only the tail.

import type { ChildProcess } from "node:child_process";
import { createWriteStream, type WriteStream } from "node:fs";
import fs from "node:fs/promises";
import { Agent, fetch as undiciFetch } from "undici";
import type { RunLayout } from "./isolation.js";
import { OPENCLAW_ENTRY } from "./openclaw.js";
import type { ChildProcesses } from "./processes.js";
import type { Redactor } from "./redactor.js";
import { sleep } from "./wait.js";

export interface StartOptions {
  /** Extra environment for the gateway process only (e.g. the Vercel token under the profile's `tokenEnv`). */
  env?: Record<string, string>;
  /** Values that must never appear in returned text (e.g. that Vercel token). */
  secrets?: string[];
  timeoutMs?: number;
  /**
   * `custom`: bind as the config says (gateway.customBindHost, with its TLS); health probes then use https on
   * 127.0.0.1, trusting only `tlsCertPem`. Default `loopback` (plain http).
   */
  bind?: "loopback" | "custom";
  tlsCertPem?: string;
}

export class GatewayProcess {
  readonly #processes: ChildProcesses;
  readonly #layout: RunLayout;
  readonly #port: number;
  readonly #redactor: Redactor;
  readonly #timings: Record<string, number>;
  readonly #entry: string;
  #child: ChildProcess | undefined;
  #log: WriteStream | undefined;
  #tls: Agent | undefined;

  constructor(
    processes: ChildProcesses,
    layout: RunLayout,
    port: number,
    redactor: Redactor,
    timings: Record<string, number>,
    entry = OPENCLAW_ENTRY,
  ) {
    this.#entry = entry;
    this.#processes = processes;
    this.#layout = layout;
    this.#port = port;
    this.#redactor = redactor;
    this.#timings = timings;
  }

  get pid(): number | undefined {
    return this.#child?.pid;
  }

  /** Starts the gateway with `baseEnv` plus options.env and waits for /healthz and /readyz. */
  async start(baseEnv: Record<string, string>, options: StartOptions): Promise<void> {
    if (this.#child) throw new Error("gateway already started");
    this.#tls = options.tlsCertPem ? new Agent({ connect: { ca: options.tlsCertPem } }) : undefined;
    this.#redactor.add(...(options.secrets ?? []));
    const started = performance.now();
    const log = createWriteStream(this.#layout.gatewayOutPath, { mode: 0o600, flags: "a" }); // a restart appends
    this.#log = log;
    const child = this.#processes.spawn(
      process.execPath,
      [
        this.#entry,
        "gateway",
        "run",
        "--port",
        String(this.#port),
        "--bind",
        options.bind ?? "loopback",
        "--auth",
        "token",
      ],
      { cwd: this.#layout.runDir, env: { ...baseEnv, ...options.env } },
    );
    this.#child = child;
    // end: false — two sources share one log; stop() ends it.
    child.stdout?.pipe(log, { end: false });
    child.stderr?.pipe(log, { end: false });
    let exited: string | undefined;
    // It stays tracked after exiting: stop() (or the harness's dispose) still ends whatever it started.
    child.on("exit", (code, signal) => {
      exited = `gateway exited ${code ?? signal}`;
    });
    const timeoutMs = options.timeoutMs ?? 90_000;
    const deadline = started + timeoutMs;
    for (const probe of ["/healthz", "/readyz"]) {
      for (;;) {
        if (exited) throw new Error(`${exited} before ${probe} answered\n${await this.logTail()}`);
        if (performance.now() > deadline) {
          throw new Error(`gateway ${probe} not 200 after ${timeoutMs} ms\n${await this.logTail()}`);
        }
        if ((await this.httpStatus(probe)) === 200) break;
        await sleep(100);
      }
      this.#timings[probe === "/healthz" ? "gatewayHealthzMs" : "gatewayReadyzMs"] = Math.round(
        performance.now() - started,
      );
    }
  }

  /** HTTP status of GET `pathname` on the gateway; 0 when it does not answer within 2 s. */
  async httpStatus(pathname: string, headers: Record<string, string> = {}): Promise<number> {
    try {
      const scheme = this.#tls ? "https" : "http";
      const response = await undiciFetch(`${scheme}://127.0.0.1:${this.#port}${pathname}`, {
        headers,
        signal: AbortSignal.timeout(2_000),
        dispatcher: this.#tls,
      });
      await response.arrayBuffer();
      return response.status;
    } catch {
      return 0;
    }
  }

  /** The last `lines` lines of the gateway's output and of openclaw.log, labelled, for failure messages. */
  async logTail(lines = 60): Promise<string> {
    const [out, log] = await this.#readLogs(async (file) => {
      try {
        return (await fs.readFile(file, "utf8")).trim().split("\n").slice(-lines).join("\n");
      } catch {
        return "(none)";
      }
    });
    return this.#redactor.redact(`--- gateway stdout/stderr ---\n${out}\n--- openclaw.log ---\n${log}`);
  }

  /** The gateway's stdout/stderr and its file log so far (redacted). */
  async logText(): Promise<string> {
    const [out, log] = await this.#readLogs((file) => fs.readFile(file, "utf8").catch(() => ""));
    return this.#redactor.redact(`${out}\n${log}`);
  }

  /** Kills the gateway at once (SIGKILL to its process group, as a crash would), then ends what it left. */
  async kill(): Promise<void> {
    const pid = this.#child?.pid;
    if (pid) {
      try {
        process.kill(-pid, "SIGKILL");
      } catch {
        // Already gone.
      }
    }
    await this.stop(0);
  }

  /** Stops the gateway (SIGTERM, then SIGKILL after graceMs) and closes its log. */
  async stop(graceMs: number): Promise<void> {
    const child = this.#child;
    this.#child = undefined;
    if (child) await this.#processes.terminate(child, graceMs);
    this.#log?.end();
    this.#log = undefined;
  }

  async #readLogs(read: (file: string) => Promise<string>): Promise<[string, string]> {
    return [await read(this.#layout.gatewayOutPath), await read(this.#layout.openclawLogPath)];
  }
}
