// Every child process the harness starts: spawned here in its own process group, tracked by PID, and
// terminated by group (only processes started here, never by name), so dispose() can leave nothing behind.

import { type ChildProcess, spawn } from "node:child_process";
import { sleep } from "./wait.js";

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

export interface SpawnOptions {
  cwd: string;
  env: Record<string, string | undefined>;
}

export class ChildProcesses {
  #children = new Set<ChildProcess>();
  readonly #redact: (text: string) => string;

  /** `redact` is applied to the output run() returns: nothing a child prints leaves unredacted. */
  constructor(redact: (text: string) => string) {
    this.#redact = redact;
  }

  /** Spawns a tracked child, detached so that it leads its own process group, with stdout/stderr piped. */
  spawn(command: string, args: string[], { cwd, env }: SpawnOptions): ChildProcess {
    const child = spawn(command, args, {
      cwd,
      env: Object.fromEntries(Object.entries(env).filter((entry): entry is [string, string] => entry[1] !== undefined)),
      stdio: ["ignore", "pipe", "pipe"],
      detached: true,
    });
    this.#children.add(child);
    return child;
  }

  /** Stops tracking a child that has ended (its owner decides which event means that). */
  forget(child: ChildProcess): void {
    this.#children.delete(child);
  }

  /** Spawns a tracked child and collects its (redacted) output; killed once timeoutMs has passed. */
  run(command: string, args: string[], options: SpawnOptions & { timeoutMs: number }): Promise<RunResult> {
    const started = performance.now();
    const child = this.spawn(command, args, options);
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
        void this.terminate(child);
      }, options.timeoutMs);
      child.on("error", (error) => {
        clearTimeout(timer);
        this.forget(child);
        reject(error);
      });
      child.on("close", (code, signal) => {
        clearTimeout(timer);
        this.forget(child);
        resolve({
          code,
          signal,
          stdout: this.#redact(stdout),
          stderr: this.#redact(stderr),
          ms: Math.round(performance.now() - started),
          timedOut,
        });
      });
    });
  }

  /** SIGTERM to the child's process group (only processes this harness started), SIGKILL after graceMs. */
  async terminate(child: ChildProcess, graceMs = 5_000): Promise<void> {
    const pid = child.pid;
    if (pid === undefined || child.exitCode !== null || child.signalCode !== null) return;
    const gone = new Promise<void>((resolve) => child.once("exit", () => resolve()));
    const signal = (sig: NodeJS.Signals) => {
      try {
        process.kill(-pid, sig);
      } catch {
        // No group (e.g. it already went): fall back to the child itself.
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
    this.forget(child);
  }

  /** Terminates every child still tracked. */
  async terminateAll(): Promise<void> {
    await Promise.all([...this.#children].map((child) => this.terminate(child)));
  }
}
