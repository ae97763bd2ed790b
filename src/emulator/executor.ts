// Real processes for `runCommand`. Each command joins its session's namespaces with nsenter
// (mount + PID, and network unless the policy is allow-all), changes to its cwd and execs the program, so
// the SDK's streamed NDJSON, `wait`, `logs` replay, `kill` and exit codes all come from a real
// process. Output is kept whole for replay (C5 replays from the start, then goes live).
import { type ChildProcess, spawn } from "node:child_process";
import { EventEmitter } from "node:events";
import { readFileSync } from "node:fs";
import { constants } from "node:os";
import { StringDecoder } from "node:string_decoder";
import type { Holder } from "./isolation.js";
import { newId } from "./registry.js";

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
  enterNetwork: boolean;
}

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
  readonly output: LogChunk[] = [];
  readonly done: Promise<number>;
  private child: ChildProcess;
  private timer?: NodeJS.Timeout;

  constructor(holder: Holder, spec: CommandSpec, track: (c: ChildProcess) => void) {
    super();
    this.setMaxListeners(0);
    this.name = spec.name;
    this.args = spec.args;
    this.cwd = spec.cwd;
    this.sessionId = spec.sessionId;
    const nsArgs = ["-t", String(holder.pid), "-m", "-p", "-r", "-w", ...(spec.enterNetwork ? ["-n"] : [])];
    const script = 'cd -- "$1" || exit 1; shift; exec "$@"';
    this.child = spawn(
      "nsenter",
      [...nsArgs, "--", "/bin/bash", "-c", script, "bash", spec.cwd, spec.name, ...spec.args],
      {
        env: spec.env,
        stdio: ["ignore", "pipe", "pipe"],
      },
    );
    track(this.child);
    this.pipe("stdout");
    this.pipe("stderr");
    this.done = new Promise((resolve) => {
      this.child.once("error", (err) => {
        this.push("stderr", `${err.message}\n`);
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
    this.emit("output", chunk);
  }

  /** Signals the program itself (nsenter's child inside the namespace), falling back to nsenter. */
  kill(signal: number): void {
    if (this.exitCode !== null) return;
    const pid = this.child.pid;
    let target = pid;
    try {
      const children = readFileSync(`/proc/${pid}/task/${pid}/children`, "utf8").trim().split(/\s+/)[0];
      if (children) target = Number(children);
    } catch {
      // nsenter already gone.
    }
    try {
      if (target) process.kill(target, signal);
    } catch {
      // Exited meanwhile.
    }
  }

  /** Replays all output so far, then follows live output until exit; returns an unsubscribe. */
  follow(onChunk: (c: LogChunk) => void, onExit: (code: number) => void): () => void {
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
