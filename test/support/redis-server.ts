// A real Redis for a spec: Debian's `redis-server`, on a free loopback port, with a data dir of its own (a temp
// dir, removed after) and its config in a file there (mode 0600: it holds the password). protected-mode on and a
// random `requirepass`, so nothing reaches its API without the password. Spawned through ChildProcesses (its own
// session and process group, ended with everything it started on stop(), and by process-guard.ts if the test
// process dies first). A machine without `redis-server` fails the spec, naming the package; it never skips.
import type { ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import { existsSync } from "node:fs";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { freePort } from "../gateway/free-port.js";
import { ChildProcesses } from "../gateway/processes.js";

export const REDIS_SERVER = "/usr/bin/redis-server";

export interface RedisServer {
  readonly url: string;
  readonly password: string;
  readonly port: number;
  readonly dir: string;
  /** Ends the server (SIGTERM to its process group, SIGKILL after graceMs); it can be started again. */
  stop(graceMs?: number): Promise<void>;
  /** Starts it again on the same port and data dir (after stop()). */
  start(): Promise<void>;
  /** stop(), then the data dir removed. */
  dispose(): Promise<void>;
}

export async function startRedisServer(
  options: { appendonly?: boolean; readyTimeoutMs?: number } = {},
): Promise<RedisServer> {
  if (!existsSync(REDIS_SERVER)) {
    throw new Error(
      `${REDIS_SERVER} is missing: install Debian's redis-server package ` +
        "(apt-get install --no-install-recommends redis-server; .ci/run does it when run as root)",
    );
  }
  const dir = await mkdtemp(path.join(tmpdir(), "vsb-redis-"));
  const password = randomBytes(24).toString("hex");
  const redact = (text: string) => text.split(password).join("[redacted]");
  const processes = new ChildProcesses(redact);
  let child: ChildProcess | undefined;
  try {
    const port = await freePort();
    const config = [
      `port ${port}`,
      "bind 127.0.0.1",
      "protected-mode yes",
      `requirepass ${password}`,
      `dir ${dir}`,
      'save ""',
      `appendonly ${options.appendonly ? "yes" : "no"}`,
      "appendfsync always",
      "daemonize no",
      'logfile ""',
      "loglevel notice",
      "databases 1",
    ].join("\n");
    const configFile = path.join(dir, "redis.conf");
    await writeFile(configFile, `${config}\n`, { mode: 0o600 });

    const start = async () => {
      const spawned = processes.spawn(REDIS_SERVER, [configFile], { cwd: dir, env: { PATH: process.env.PATH } });
      child = spawned;
      await ready(spawned, options.readyTimeoutMs ?? 10_000, redact);
    };
    const stop = async (graceMs = 2_000) => {
      if (child) await processes.terminate(child, graceMs);
      child = undefined;
    };
    await start();
    return {
      url: `redis://127.0.0.1:${port}`,
      password,
      port,
      dir,
      stop,
      start,
      dispose: async () => {
        await stop();
        await rm(dir, { recursive: true, force: true });
      },
    };
  } catch (error) {
    await processes.terminateAll(1_000).catch(() => undefined);
    await rm(dir, { recursive: true, force: true });
    throw error;
  }
}

/** Resolves once the server logs that it accepts connections; rejects (with its redacted output) otherwise. */
function ready(child: ChildProcess, timeoutMs: number, redact: (text: string) => string): Promise<void> {
  return new Promise((resolve, reject) => {
    let output = "";
    const fail = (why: string) => {
      clearTimeout(timer);
      reject(new Error(`redis-server ${why}; its output:\n${redact(output).slice(-2_000)}`));
    };
    const timer = setTimeout(() => fail(`was not ready within ${timeoutMs} ms`), timeoutMs);
    child.once("error", (error) => fail(`could not start (${error.name})`));
    child.once("exit", (code, signal) => fail(`exited (${signal ?? code}) before it was ready`));
    const collect = (chunk: Buffer) => {
      output = (output + chunk.toString()).slice(-8_000);
      if (/Ready to accept connections/.test(output)) {
        clearTimeout(timer);
        child.removeAllListeners("exit");
        resolve();
      }
    };
    child.stdout?.on("data", collect);
    child.stderr?.on("data", collect);
  });
}
