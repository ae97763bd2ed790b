// The emulator's side of a program its sandbox's outer process started (serve-script.ts): the program's streams
// (the emulator's ends of socket pairs, handed over on the factory's channel as Node hands over its own handles),
// its exit, and signals to its process group. `ProgramTable` routes the outer processes' messages to the program
// they answer by id, and ends the programs of a holder that is gone (its PID namespace died, and they with it).
import type { Socket } from "node:net";
import { constants } from "node:os";
import { newId } from "./ids.js";

/** A program to run in a sandbox: its argv (searched in the env's PATH), environment and working directory. */
export interface ProgramSpec {
  argv: string[];
  env: Record<string, string>;
  cwd: string;
  /** Sandbox root (as `sudo` runs), or a user's ids (it gets that user's groups too). */
  user: "root" | { uid: number; gid: number };
  /** Give it a stdin stream; otherwise its stdin is /dev/null. */
  stdin?: boolean;
}

type StreamName = "stdin" | "stdout" | "stderr";

/** The exit code a shell would report: the program's status, or 128 + the signal that ended it. */
export function shellExitCode(status: number): number {
  return status >= 0 ? status : 128 - status;
}

/** A started program: `exited` is its status (shell-style); `closed` also waits for its output streams to end. */
export class SandboxProgram {
  readonly stdout: Socket;
  readonly stderr: Socket;
  readonly stdin?: Socket;
  readonly exited: Promise<number>;
  readonly closed: Promise<number>;

  constructor(
    streams: Partial<Record<StreamName, Socket>>,
    exited: Promise<number>,
    private readonly signal: (signal: number) => void,
  ) {
    this.stdout = streams.stdout!;
    this.stderr = streams.stderr!;
    this.stdin = streams.stdin;
    this.exited = exited;
    const ended = (s: Socket) => new Promise<void>((resolve) => (s.destroyed ? resolve() : s.once("close", resolve)));
    this.closed = Promise.all([exited, ended(this.stdout), ended(this.stderr)]).then(([code]) => code);
  }

  /** Signals the program's process group while it runs (a no-op once it was reaped). */
  kill(signal: number): void {
    this.signal(signal);
  }
}

/**
 * Runs a program to its end with `input` on its stdin (its stdout dropped): its exit code and the start of its
 * stderr (4 KiB at most).
 */
export async function runToEnd(
  start: (spec: ProgramSpec) => Promise<SandboxProgram>,
  spec: Omit<ProgramSpec, "stdin">,
  input?: string | Buffer,
): Promise<{ code: number; stderr: string }> {
  const program = await start({ ...spec, stdin: true });
  let stderr = "";
  program.stderr.on("data", (d) => {
    if (stderr.length < 4096) stderr += d;
  });
  program.stdout.resume();
  program.stdin!.on("error", () => {}); // the program may exit before reading it all
  program.stdin!.end(input ?? "");
  return { code: await program.closed, stderr: stderr.trim() };
}

interface Pending {
  holder: string;
  wanted: StreamName[];
  streams: Partial<Record<StreamName, Socket>>;
  started?: SandboxProgram;
  resolve(program: SandboxProgram): void;
  reject(error: Error): void;
  exit(code: number): void;
  exited: Promise<number>;
}

/** A message about a program from its outer process (or the factory). */
export interface ProgramMessage {
  run: string;
  stream?: StreamName;
  pid?: number;
  exit?: number;
  error?: string;
}

export class ProgramTable {
  private readonly programs = new Map<string, Pending>();

  /** Registers a program of `holder`; `send` delivers the request (or a signal) to the factory. */
  open(holder: string, spec: ProgramSpec, send: (message: object) => boolean): Promise<SandboxProgram> {
    const id = newId("run");
    let exit!: (code: number) => void;
    const exited = new Promise<number>((resolve) => {
      exit = resolve;
    });
    const started = new Promise<SandboxProgram>((resolve, reject) => {
      this.programs.set(id, {
        holder,
        wanted: spec.stdin ? ["stdin", "stdout", "stderr"] : ["stdout", "stderr"],
        streams: {},
        resolve,
        reject,
        exit,
        exited,
      });
    });
    const request = {
      run: id,
      holder,
      argv: spec.argv,
      env: spec.env,
      cwd: spec.cwd,
      root: spec.user === "root",
      ...(spec.user === "root" ? {} : { uid: spec.user.uid, gid: spec.user.gid }),
      stdin: spec.stdin === true,
    };
    if (!send(request)) this.fail(id, new Error("the sandbox's holder factory is gone"));
    return started;
  }

  receive(message: ProgramMessage, handle: Socket | undefined, send: (message: object) => boolean): void {
    const pending = this.programs.get(message.run);
    if (!pending) {
      handle?.destroy();
      return;
    }
    if (handle && message.stream && pending.wanted.includes(message.stream) && !pending.streams[message.stream]) {
      pending.streams[message.stream] = handle;
      if (pending.wanted.every((s) => pending.streams[s])) {
        // Signals go through the outer process, which signals only a program it has not reaped yet.
        pending.started = new SandboxProgram(pending.streams, pending.exited, (signal) =>
          send({ kill: message.run, holder: pending.holder, signal }),
        );
        pending.resolve(pending.started);
      }
    } else {
      handle?.destroy();
    }
    if (message.error !== undefined) this.fail(message.run, new Error(message.error));
    if (message.exit !== undefined) this.finish(message.run, shellExitCode(message.exit));
  }

  /** Every program of a holder that is gone ended with it (SIGKILL, as its PID namespace's end kills them). */
  holderGone(holder: string): void {
    for (const [id, pending] of this.programs) {
      if (pending.holder !== holder) continue;
      if (pending.started) this.finish(id, 128 + constants.signals.SIGKILL);
      else this.fail(id, new Error("the sandbox stopped before the program started"));
    }
  }

  /** The factory is gone: so is every holder, and every program. */
  allGone(): void {
    for (const pending of [...this.programs.values()]) this.holderGone(pending.holder);
  }

  private finish(id: string, code: number): void {
    const pending = this.programs.get(id);
    if (!pending) return;
    this.programs.delete(id);
    pending.exit(code);
    if (!pending.started) pending.reject(new Error(`the program ended before its streams arrived (${code})`));
  }

  private fail(id: string, error: Error): void {
    const pending = this.programs.get(id);
    if (!pending) return;
    this.programs.delete(id);
    for (const stream of Object.values(pending.streams)) stream.destroy();
    pending.exit(126);
    pending.reject(error);
  }
}
