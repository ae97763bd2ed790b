// Real processes for `runCommand`. Each command is started by its session's outer process (serve-script.ts): in
// the sandbox's limited cgroups and namespaces, in a session and process group of its own, as the sandbox's
// default user unless it runs with `sudo`, in its cwd, so the SDK's streamed NDJSON, `wait`, `logs` replay, `kill`
// and exit codes all come from a real process. `kill` signals the command's whole process group.
// Output kept for `logs` replay is bounded by what it costs (OUTPUT_RETAIN_CHARS per command, counting each kept
// chunk's overhead as characters too): output arriving in small pieces (a program writing a byte per write()) is
// gathered into chunks of up to GATHER_BYTES before it is kept, so its pieces never cost more than its bytes. Past
// the bound the oldest output is dropped and a replay starts with a marker saying how much; live followers get every byte, at their own pace:
// while any follower's connection is backed up, the command's streams are paused (the program blocks on write, as
// it would on a slow terminal), so a command printing gigabytes never piles them up in the emulator's memory.
import { EventEmitter } from "node:events";
import type { Socket } from "node:net";
import { StringDecoder } from "node:string_decoder";
import { newId } from "./ids.js";
import { SANDBOX_USER } from "./image.js";
import type { Holder } from "./isolation.js";
import type { SandboxProgram } from "./sandbox-program.js";

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

/**
 * Output kept per command for `logs` replay, in characters plus CHUNK_OVERHEAD_CHARS per kept chunk; older output is
 * dropped (with a marker) past it. A character takes one or two bytes in V8 and a chunk's overhead less than twice
 * its count, so a command's replay log holds at most ~16 MiB of memory, however its output was written.
 */
export const OUTPUT_RETAIN_CHARS = 8 * 1024 * 1024;
/** What a kept chunk costs besides its characters (its object, its string's header, its slot), in characters. */
export const CHUNK_OVERHEAD_CHARS = 64;
/** Output gathered per running command before it is kept as one chunk (a chunk this large or larger is kept as it came). */
const GATHER_BYTES = 16 * 1024;

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
  /** The replay log: kept chunks from `first` on (the dropped ones before it are cut away now and then). */
  private output: LogChunk[] = [];
  private first = 0;
  /** What the kept chunks cost, in characters (CHUNK_OVERHEAD_CHARS each besides their own). */
  private retained = 0;
  /** Output not kept yet: small pieces of one stream, gathered (UTF-8) until a chunk is worth keeping. */
  private gathered?: Buffer;
  private gatheredBytes = 0;
  private gatheredStream: LogChunk["stream"] = "stdout";
  /** Characters of output dropped from the replay log (never from a live follower's stream). */
  dropped = 0;
  readonly done: Promise<number>;
  private program?: SandboxProgram;
  /** A signal asked for before the program started, delivered once it has. */
  private pendingSignal?: number;
  /** Set once the program exited (what its streams still hold is read whatever the followers' pace). */
  private exited = false;
  private timer?: NodeJS.Timeout;
  /** Followers whose connection is backed up; the pipes are paused while there is any. */
  private readonly holds = new Set<object>();

  constructor(holder: Holder, spec: CommandSpec) {
    super();
    this.setMaxListeners(0);
    this.name = spec.name;
    this.args = spec.args;
    this.cwd = spec.cwd;
    this.sessionId = spec.sessionId;
    this.done = this.start(holder, spec);
    if (spec.timeoutMs && spec.timeoutMs > 0) {
      this.timer = setTimeout(() => this.kill(9), spec.timeoutMs);
    }
  }

  private async start(holder: Holder, spec: CommandSpec): Promise<number> {
    let code: number;
    try {
      const program = await holder.start.run({
        argv: [spec.name, ...spec.args],
        env: spec.env,
        cwd: spec.cwd,
        user: spec.sudo ? "root" : SANDBOX_USER,
      });
      this.program = program;
      if (this.pendingSignal !== undefined) program.kill(this.pendingSignal);
      this.pipe(program.stdout, "stdout");
      this.pipe(program.stderr, "stderr");
      if (this.holds.size > 0) this.pause(true);
      // Once the program is gone only what its sockets still hold remains: read it whatever the followers' pace,
      // so the command's end is never held up by a stalled follower.
      void program.exited.then(() => {
        this.exited = true;
        this.holds.clear();
        this.pause(false);
      });
      code = await program.closed;
    } catch (error) {
      this.push("stderr", `${(error as Error).message}\n`);
      code = 126;
    }
    clearTimeout(this.timer);
    // Its output is complete: what was gathered is kept, and the gathering buffer goes.
    this.seal();
    this.gathered = undefined;
    this.exitCode = code;
    this.endedAt = Date.now();
    this.emit("exit", code);
    return code;
  }

  private pipe(source: Socket, stream: "stdout" | "stderr") {
    const decoder = new StringDecoder("utf8");
    source.on("data", (chunk: Buffer) => {
      const text = decoder.write(chunk);
      if (text) this.push(stream, text);
    });
    source.on("end", () => {
      const rest = decoder.end();
      if (rest) this.push(stream, rest);
    });
    source.on("error", () => undefined);
  }

  private pause(paused: boolean): void {
    for (const source of [this.program?.stdout, this.program?.stderr]) {
      if (paused) source?.pause();
      else source?.resume();
    }
  }

  private push(stream: "stdout" | "stderr", data: string) {
    this.retain(stream, data);
    this.emit("output", { stream, data });
  }

  /** Gathers a small piece, or keeps a large one as it came (after what was gathered before it). */
  private retain(stream: LogChunk["stream"], data: string) {
    const bytes = Buffer.byteLength(data);
    if (this.gatheredBytes > 0 && (stream !== this.gatheredStream || this.gatheredBytes + bytes > GATHER_BYTES)) {
      this.seal();
    }
    if (bytes >= GATHER_BYTES || this.exitCode !== null) {
      this.keep({ stream, data });
      return;
    }
    this.gathered ??= Buffer.allocUnsafeSlow(GATHER_BYTES);
    this.gatheredStream = stream;
    // Whole characters only (the decoder's output), so a chunk never splits one.
    this.gatheredBytes += this.gathered.write(data, this.gatheredBytes);
  }

  /** Keeps what was gathered as one chunk. */
  private seal() {
    if (this.gatheredBytes === 0 || !this.gathered) return;
    const data = this.gathered.toString("utf8", 0, this.gatheredBytes);
    this.gatheredBytes = 0;
    this.keep({ stream: this.gatheredStream, data });
  }

  private keep(chunk: LogChunk) {
    this.output.push(chunk);
    this.retained += chunk.data.length + CHUNK_OVERHEAD_CHARS;
    while (this.retained > OUTPUT_RETAIN_CHARS && this.output.length - this.first > 1) {
      const old = this.output[this.first]!;
      this.output[this.first++] = undefined as never;
      this.retained -= old.data.length + CHUNK_OVERHEAD_CHARS;
      this.dropped += old.data.length;
    }
    // Dropped slots are cut away in one go once they are as many as the kept ones: amortized O(1) per chunk.
    if (this.first > 0 && this.first >= this.output.length - this.first) {
      this.output = this.output.slice(this.first);
      this.first = 0;
    }
  }

  /** Pauses the command's output until every holder has released it (a follower waiting for `drain`). */
  hold(holder: object): void {
    if (this.exitCode !== null || this.exited) return;
    this.holds.add(holder);
    this.pause(true);
  }

  isHeldBy(holder: object): boolean {
    return this.holds.has(holder);
  }

  release(holder: object): void {
    if (!this.holds.delete(holder) || this.holds.size > 0) return;
    this.pause(false);
  }

  /** Signals the program's process group (it leads one); a signal sent before it started is delivered on start. */
  kill(signal: number): void {
    if (this.exitCode !== null) return;
    if (this.program) this.program.kill(signal);
    else this.pendingSignal = signal;
  }

  /** Replays all output so far, then follows live output until exit; returns an unsubscribe. */
  follow(onChunk: (c: LogChunk) => void, onExit: (code: number) => void): () => void {
    if (this.dropped > 0) {
      onChunk({
        stream: "stderr",
        data: `[emulator: ${this.dropped} characters of earlier output dropped; logs keep at most the last ${OUTPUT_RETAIN_CHARS} characters]\n`,
      });
    }
    for (let i = this.first; i < this.output.length; i++) onChunk(this.output[i]!);
    if (this.gatheredBytes > 0 && this.gathered) {
      onChunk({ stream: this.gatheredStream, data: this.gathered.toString("utf8", 0, this.gatheredBytes) });
    }
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
