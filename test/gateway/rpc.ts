// The harness's gateway RPCs over one persistent connection (rpc-client.mjs, a tracked child on the harness's
// isolated environment): what `openclaw gateway call` does, without a new CLI process per call. Its answers have
// the CLI's shape (CallResult: exit code 0 with the payload as JSON on stdout, 1 with the gateway's error), so a
// spec reads them the same either way; the CLI itself stays proven by the specs that run it.
import type { ChildProcess } from "node:child_process";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import type { CallResult } from "./cli-output.js";
import type { ChildProcesses } from "./processes.js";
import { waitFor } from "./wait.js";

const SCRIPT = fileURLToPath(new URL("./rpc-client.mjs", import.meta.url));
/** What the child gets beyond a call's own timeout to answer it. */
const ANSWER_GRACE_MS = 30_000;

interface Answer {
  id?: number;
  event?: string;
  ok?: boolean;
  payload?: unknown;
  message?: string;
  error?: { type?: string; message: string; code?: string; details?: unknown };
}

/** A failure of the connection rather than the gateway's answer, as the CLI's JSON names it. */
const transportError = (message: string): Answer => ({
  ok: false,
  error: { type: "gateway_transport_error", message },
});

export interface RpcTarget {
  /** The gateway's dist/plugin-sdk/gateway-runtime.js. */
  sdk: string;
  configPath: string;
  /** ws://127.0.0.1:<port>, or wss:// with the certificate's SHA-256 in `tlsFingerprint`. */
  url: string;
  tlsFingerprint?: string;
  cwd: string;
  env: Record<string, string>;
}

export class GatewayRpc {
  readonly #processes: ChildProcesses;
  readonly #child: ChildProcess;
  readonly #redact: (text: string) => string;
  readonly #pending = new Map<number, (answer: Answer) => void>();
  readonly #connectErrors: string[] = [];
  #next = 0;
  #ready = false;
  #closed: string | undefined;

  private constructor(processes: ChildProcesses, child: ChildProcess, redact: (text: string) => string) {
    this.#processes = processes;
    this.#child = child;
    this.#redact = redact;
    createInterface({ input: child.stdout! }).on("line", (line) => this.#read(line));
    child.stderr?.resume();
    child.once("exit", (code, signal) => this.#close(`the gateway client exited ${code ?? signal}`));
  }

  /** Starts the client and waits for its connection (the hello), failing with what the connection said. */
  static async connect(
    processes: ChildProcesses,
    target: RpcTarget,
    redact: (text: string) => string,
    timeoutMs = 60_000,
  ): Promise<GatewayRpc> {
    const args = [
      SCRIPT,
      target.sdk,
      target.configPath,
      target.url,
      ...(target.tlsFingerprint ? [target.tlsFingerprint] : []),
    ];
    const child = processes.spawn(process.execPath, args, { cwd: target.cwd, env: target.env, stdin: "pipe" });
    const rpc = new GatewayRpc(processes, child, redact);
    try {
      await waitFor(
        "the harness's gateway client to connect",
        async () => {
          if (rpc.#closed) throw new Error(`${rpc.#closed}: ${redact(rpc.#connectErrors.join("; "))}`);
          return rpc.#ready || undefined;
        },
        { timeoutMs, intervalMs: 50 },
      );
    } catch (error) {
      await rpc.stop();
      throw new Error(`${(error as Error).message}\nconnect errors: ${redact(rpc.#connectErrors.join("; "))}`);
    }
    return rpc;
  }

  /** `method` with `params`, answered like `openclaw gateway call <method> --json`. */
  call<T>(method: string, params: unknown, timeoutMs: number): Promise<CallResult<T>> {
    const started = performance.now();
    const id = this.#next++;
    const result = (answer: Answer, timedOut = false): CallResult<T> => {
      const ms = Math.round(performance.now() - started);
      const base = { signal: null, ms, timedOut };
      if (answer.ok) {
        const stdout = this.#redact(JSON.stringify(answer.payload, null, 2));
        return { ...base, code: 0, stdout, stderr: "", json: JSON.parse(stdout) as T };
      }
      const error = answer.error ?? { message: "no answer" };
      const stdout = this.#redact(JSON.stringify({ ok: false, error }, null, 2));
      return { ...base, code: timedOut ? null : 1, stdout, stderr: "", json: JSON.parse(stdout) as T };
    };
    if (this.#closed) return Promise.resolve(result(transportError(this.#closed)));
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        this.#pending.delete(id);
        resolve(result(transportError(`no answer within ${timeoutMs} ms`), true));
      }, timeoutMs + ANSWER_GRACE_MS);
      this.#pending.set(id, (answer) => {
        clearTimeout(timer);
        resolve(result(answer));
      });
      this.#child.stdin?.write(`${JSON.stringify({ id, method, params, timeoutMs })}\n`);
    });
  }

  /** Ends the client; calls still waiting are answered with an error, as a CLI call ends with its connection. */
  async stop(): Promise<void> {
    this.#close("the gateway client was stopped");
    await this.#processes.terminate(this.#child, 2_000);
  }

  #read(line: string): void {
    let answer: Answer;
    try {
      answer = JSON.parse(line) as Answer;
    } catch {
      return; // a library's own log line
    }
    if (answer.event === "ready") this.#ready = true;
    else if (answer.event === "connect-error") this.#connectErrors.push(String(answer.message));
    else if (typeof answer.id === "number") {
      const settle = this.#pending.get(answer.id);
      this.#pending.delete(answer.id);
      settle?.(answer);
    }
  }

  #close(reason: string): void {
    this.#closed ??= reason;
    for (const [id, settle] of this.#pending) {
      this.#pending.delete(id);
      settle(transportError(reason));
    }
  }
}
