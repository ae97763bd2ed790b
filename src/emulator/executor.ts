// Real processes for `runCommand`. Each command joins its sandbox's limited cgroups (cgroups.ts), then
// its session's namespaces with nsenter (mount, PID, user, and network unless the policy is allow-all:
// isolation.ts), starts a session and process group of its own (setsid), drops to the sandbox's default
// user unless it runs with `sudo`, changes to its cwd and execs the program, so the SDK's streamed
// NDJSON, `wait`, `logs` replay, `kill` and exit codes all come from a real process. `kill` signals
// the command's whole process group.
// Output kept for `logs` replay is bounded (OUTPUT_RETAIN_CHARS characters per command): past it the oldest output
// is dropped and a replay starts with a marker saying how much; live followers get every byte, at their own pace:
// while any follower's connection is backed up, the command's pipes are paused (the program blocks on write, as
// it would on a slow terminal), so a command printing gigabytes never piles them up in the emulator's memory.
import { type ChildProcess, spawn } from "node:child_process";
import { EventEmitter } from "node:events";
import { readFileSync } from "node:fs";
import { constants } from "node:os";
import { StringDecoder } from "node:string_decoder";
import { newId } from "./ids.js";
import { AS_DEFAULT_USER, type Holder, inSandbox } from "./isolation.js";

export interface LogChunk {
  stream: "stdout" | "stderr";
  data: string;
}

export interface CommandSpec {
  sessionId: string;
  name: string;
  args: string[];
  cwd: string;
  env: Record<string, string>;
  /** Kill with SIGKILL after this many ms. */
  timeoutMs?: number;
  /** Run as sandbox root instead of the default user. */
  sudo: boolean;
}

/** Output kept per command for `logs` replay; older output is dropped (with a marker) past it. */
export const OUTPUT_RETAIN_CHARS = 8 * 1024 * 1024; // at most ~16 MiB of memory per command

/** One running or finished command; `exit` fires once with the final exit code. */
export class CommandProcess extends EventEmitter {
  readonly id = newId("cmd");
  readonly startedAt = Date.now();
  readonly name: string;
  readonly args: string[];
  readonly cwd: string;
  readonly sessionId: string;
  exitCode: number | null = null;
  endedAt?: number;
  /** Set when the session ended under the command (the SDK gets a stream error). */
  interrupted = false;
  private readonly output: LogChunk[] = [];
  private retained = 0;
  /** Characters of output dropped from the replay log (never from a live follower's stream). */
  dropped = 0;
  readonly done: Promise<number>;
  private child: ChildProcess;
  private timer?: NodeJS.Timeout;
  /** Followers whose connection is backed up; the pipes are paused while there is any. */
  private readonly holds = new Set<object>();

  constructor(holder: Holder, spec: CommandSpec, track: (c: ChildProcess) => void) {
    super();
    this.setMaxListeners(0);
    this.name = spec.name;
    this.args = spec.args;
    this.cwd = spec.cwd;
    this.sessionId = spec.sessionId;
    const script = 'cd -- "$1" || exit 1; shift; exec "$@"';
    const user = spec.sudo ? [] : AS_DEFAULT_USER;
    const [command, args] = inSandbox(holder, [
      "/usr/bin/setsid",
      ...user,
      "/bin/bash",
      "-c",
      script,
      "bash",
      spec.cwd,
      spec.name,
      ...spec.args,
    ]);
    // Detached: nsenter (after joining the sandbox's cgroups) leads a host process group of its own, never the emulator's.
    this.child = spawn(command, args, { env: spec.env, stdio: ["ignore", "pipe", "pipe"], detached: true });
    track(this.child);
    this.pipe("stdout");
    this.pipe("stderr");
    this.done = new Promise((resolve) => {
      this.child.once("error", (err) => {
        this.push("stderr", `${err.message}\n`);
      });
      // Once the program is gone only what its pipes still hold (64 KiB each) remains: read it whatever the
      // followers' pace, so the command's end is never held up by a stalled follower.
      this.child.once("exit", () => {
        this.holds.clear();
        this.child.stdout?.resume();
        this.child.stderr?.resume();
      });
      this.child.once("close", (code, signal) => {
        clearTimeout(this.timer);
        this.exitCode = code ?? 128 + (signal ? (constants.signals[signal] ?? 9) : 9);
        this.endedAt = Date.now();
        this.emit("exit", this.exitCode);
        resolve(this.exitCode);
      });
    });
    if (spec.timeoutMs && spec.timeoutMs > 0) {
      this.timer = setTimeout(() => this.kill(9), spec.timeoutMs);
    }
  }

  private pipe(stream: "stdout" | "stderr") {
    const decoder = new StringDecoder("utf8");
    const source = this.child[stream]!;
    source.on("data", (chunk: Buffer) => {
      const text = decoder.write(chunk);
      if (text) this.push(stream, text);
    });
    source.on("end", () => {
      const rest = decoder.end();
      if (rest) this.push(stream, rest);
    });
  }

  private push(stream: "stdout" | "stderr", data: string) {
    const chunk = { stream, data };
    this.output.push(chunk);
    this.retained += data.length;
    while (this.retained > OUTPUT_RETAIN_CHARS && this.output.length > 1) {
      const old = this.output.shift()!;
      this.retained -= old.data.length;
      this.dropped += old.data.length;
    }
    this.emit("output", chunk);
  }

  /** Pauses the command's output until every holder has released it (a follower waiting for `drain`). */
  hold(holder: object): void {
    if (this.exitCode !== null || this.child.exitCode !== null || this.child.signalCode !== null) return;
    this.holds.add(holder);
    this.child.stdout?.pause();
    this.child.stderr?.pause();
  }

  isHeldBy(holder: object): boolean {
    return this.holds.has(holder);
  }

  release(holder: object): void {
    if (!this.holds.delete(holder) || this.holds.size > 0) return;
    this.child.stdout?.resume();
    this.child.stderr?.resume();
  }

  /** Signals the program's process group (it leads one after setsid), falling back to nsenter's. */
  kill(signal: number): void {
    if (this.exitCode !== null) return;
    const pid = this.child.pid;
    let program: number | undefined;
    try {
      program = Number(readFileSync(`/proc/${pid}/task/${pid}/children`, "utf8").trim().split(/\s+/)[0]) || undefined;
    } catch {
      // nsenter already gone.
    }
    for (const group of [program, pid]) {
      try {
        if (group) return void process.kill(-group, signal);
      } catch {
        // Not a group (yet, or any more): try the next.
      }
    }
  }

  /** Replays all output so far, then follows live output until exit; returns an unsubscribe. */
  follow(onChunk: (c: LogChunk) => void, onExit: (code: number) => void): () => void {
    if (this.dropped > 0) {
      onChunk({
        stream: "stderr",
        data: `[emulator: ${this.dropped} characters of earlier output dropped; logs keep the last ${OUTPUT_RETAIN_CHARS} characters]\n`,
      });
    }
    for (const chunk of this.output) onChunk(chunk);
    if (this.exitCode !== null) {
      onExit(this.exitCode);
      return () => {};
    }
    this.on("output", onChunk);
    const exitListener = (code: number) => {
      this.off("output", onChunk);
      onExit(code);
    };
    this.once("exit", exitListener);
    return () => {
      this.off("output", onChunk);
      this.off("exit", exitListener);
    };
  }
}
