// Every child process the harness starts: spawned here detached (own session and process group) with an
// environment tag, and ended with everything it started (see process-trees.ts) on success, failure and timeout,
// only processes found that way, never by name. If the test process dies first, process-guard.ts ends them.

import { type ChildProcess, spawn } from "node:child_process";
import { guard, release } from "./process-guard.js";
import { ProcessTree } from "./process-trees.js";

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
  /** `pipe` gives the child a stdin the caller writes to; default none. */
  stdin?: "pipe" | "ignore";
}

/** Turns a command into the one spawned for it, which execs it in place (the pid stays the child's). */
export type Wrap = (command: string, args: string[]) => { command: string; args: string[] };

/** How long a tree gets between SIGTERM and SIGKILL unless the caller says otherwise. */
const DEFAULT_GRACE_MS = 5_000;

export class ChildProcesses {
  readonly #trees = new Map<ChildProcess, ProcessTree>();
  readonly #redact: (text: string) => string;
  readonly #wrap: Wrap | undefined;

  /**
   * `redact` is applied to the output run() returns: nothing a child prints leaves unredacted. `wrap`, when given,
   * turns each command into the one actually spawned (private-tmp.ts); it must exec the command in place.
   */
  constructor(redact: (text: string) => string, wrap?: Wrap) {
    this.#redact = redact;
    this.#wrap = wrap;
  }

  /**
   * Spawns a tracked child, detached so that it leads its own process group, with stdout/stderr piped. It stays
   * tracked until terminate() (or terminateAll()) has ended it and everything it started.
   */
  spawn(command: string, args: string[], { cwd, env, stdin = "ignore" }: SpawnOptions): ChildProcess {
    const tree = new ProcessTree();
    const owner = guard(tree);
    const defined = Object.entries(env).filter((entry): entry is [string, string] => entry[1] !== undefined);
    const spawned = this.#wrap ? this.#wrap(command, args) : { command, args };
    const child = spawn(spawned.command, spawned.args, {
      cwd,
      env: { ...Object.fromEntries(defined), ...owner, ...tree.environment },
      stdio: [stdin, "pipe", "pipe"],
      detached: true,
    });
    if (child.pid !== undefined) tree.adopt(child.pid);
    this.#trees.set(child, tree);
    return child;
  }

  /**
   * Spawns a tracked child and collects its (redacted) output. Once the child exits, or timeoutMs passes, its
   * whole tree is ended (SIGTERM, then SIGKILL after graceMs) before the result is returned: nothing it started
   * outlives the call.
   */
  async run(
    command: string,
    args: string[],
    options: SpawnOptions & { timeoutMs: number; graceMs?: number },
  ): Promise<RunResult> {
    const started = performance.now();
    const graceMs = options.graceMs ?? DEFAULT_GRACE_MS;
    const child = this.spawn(command, args, options);
    let stdout = "";
    let stderr = "";
    child.stdout?.setEncoding("utf8").on("data", (chunk: string) => {
      stdout += chunk;
    });
    child.stderr?.setEncoding("utf8").on("data", (chunk: string) => {
      stderr += chunk;
    });
    const closed = new Promise<void>((resolve) => child.once("close", () => resolve()));
    let timedOut = false;
    let timer: NodeJS.Timeout | undefined;
    try {
      const exit = await new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve, reject) => {
        child.once("error", reject);
        child.once("exit", (code, signal) => resolve({ code, signal }));
        timer = setTimeout(() => {
          timedOut = true;
          this.terminate(child, graceMs).catch(reject);
        }, options.timeoutMs);
      });
      // The child is gone; end whatever it left behind (which may hold its pipes open), then read to the end.
      await this.terminate(child, graceMs);
      await closed;
      return {
        ...exit,
        stdout: this.#redact(stdout),
        stderr: this.#redact(stderr),
        ms: Math.round(performance.now() - started),
        timedOut,
      };
    } finally {
      clearTimeout(timer);
      await this.terminate(child, graceMs);
    }
  }

  /**
   * Ends `child` and everything it started: SIGTERM to each of the tree's process groups (and members), SIGKILL
   * after graceMs; resolves once nothing of it runs, throws if something survives SIGKILL.
   */
  async terminate(child: ChildProcess, graceMs = DEFAULT_GRACE_MS): Promise<void> {
    const tree = this.#trees.get(child);
    if (!tree) return;
    await tree.end(graceMs);
    this.#trees.delete(child);
    release(tree);
  }

  /** Terminates every child still tracked, with everything they started. */
  async terminateAll(graceMs = DEFAULT_GRACE_MS): Promise<void> {
    const results = await Promise.allSettled([...this.#trees.keys()].map((child) => this.terminate(child, graceMs)));
    const failed = results.find((result): result is PromiseRejectedResult => result.status === "rejected");
    if (failed) throw failed.reason;
  }
}
