// Interactive shells (E7, `sandbox.openInteractive()`), speaking the protocol of Vercel's `sandbox` CLI:
// the endpoint answers `{url, token}`; the client opens a WebSocket at `url?token=…` and sends a text frame
// `{"type":"start", command, args, env: ["K=V"…], cwd, cols, rows}` (an empty command asks for the
// account's shell from passwd), then binary frames of terminal input and text frames
// `{"type":"resize", cols, rows}`; the server sends binary frames of terminal output and, when the
// program ends, `{"type":"exit", code}` before closing. Here the URL is on the emulator's loopback API
// server (`ws://127.0.0.1:<port>/…`), and the token is single-use, tied to the session, and expires
// after a minute. The terminal is a real PTY inside the sandbox (pty-helper.ts), run as the sandbox's
// default user in its namespaces and cgroups, with the same environment and egress a command gets.
// Closing the connection ends the shell; the shell's end closes the connection.
// The helper is started like every program of a sandbox, by the holder's outer process (holder.start.run,
// serve-script.ts), which already is the sandbox's root in its namespaces and cgroups: no process of the host's
// enters the sandbox for it (a host-root `nsenter` used to fork into the sandbox's PID namespace before it dropped
// its ids, long enough for sandbox root to trace it), and the start frame's env and the sandbox's reach only the
// program inside, never a program the host runs.
//
// The WebSocket framing is the `ws` package's, a dependency loaded when the first shell opens (an emulator
// that never opens one never loads it); should it be missing, openInteractive answers 422 `interactive_not_supported`.
import { createHash, randomBytes } from "node:crypto";
import type { IncomingMessage, ServerResponse } from "node:http";
import type { Duplex } from "node:stream";
import { HttpError, sendJson } from "./http.js";
import { SANDBOX_USER } from "./image.js";
import { SANDBOX_HOME } from "./payloads.js";
import { commandEnv, networkEnv, type ProgramState } from "./program-env.js";
import { PTY_HELPER, PTY_INPUT, PTY_RESIZE, ptyFrame } from "./pty-helper.js";
import type { SessionRecord } from "./registry.js";
import type { SandboxProgram } from "./sandbox-program.js";

const TICKET_TTL_MS = 60_000;
const START_TIMEOUT_MS = 30_000;
const MAX_FRAME_BYTES = 1024 * 1024;
/** Past this much unsent output the PTY is paused (the program blocks on write, as on a slow terminal). */
const HIGH_WATER_BYTES = 1024 * 1024;
const PATH_PATTERN = /^\/v2\/sandboxes\/sessions\/([^/]+)\/interactive\/connect$/;

/** The part of the `ws` package the emulator uses (it ships no types of its own). */
interface WsSocket {
  readonly readyState: number;
  readonly bufferedAmount: number;
  send(data: Buffer | string, callback?: (error?: Error) => void): void;
  close(code?: number, reason?: string): void;
  terminate(): void;
  on(event: "message", listener: (data: Buffer, isBinary: boolean) => void): void;
  on(event: "close" | "error", listener: () => void): void;
}
interface WsServer {
  handleUpgrade(req: IncomingMessage, socket: Duplex, head: Buffer, done: (ws: WsSocket) => void): void;
  close(): void;
}
type WsModule = { WebSocketServer: new (options: object) => WsServer };
/** Resolved at run time, not bundled: an optional package until it is a declared dependency. */
const WS_PACKAGE: string = "ws";

const digest = (token: string) => createHash("sha256").update(token).digest("hex");

export interface StartFrame {
  command: string;
  args: string[];
  env: Record<string, string>;
  cwd: string;
  cols: number;
  rows: number;
}

/** Reads the client's `start` frame (pure); undefined when it is not one. */
export function parseStart(text: string): StartFrame | undefined {
  let frame: Record<string, unknown>;
  try {
    frame = JSON.parse(text) as Record<string, unknown>;
  } catch {
    return undefined;
  }
  if (frame?.type !== "start") return undefined;
  const strings = (v: unknown) => (Array.isArray(v) ? v.filter((x): x is string => typeof x === "string") : []);
  const size = (v: unknown, fallback: number) =>
    typeof v === "number" && Number.isInteger(v) && v > 0 ? Math.min(v, 1000) : fallback;
  const env: Record<string, string> = {};
  for (const entry of strings(frame.env)) {
    const at = entry.indexOf("=");
    if (at > 0) env[entry.slice(0, at)] = entry.slice(at + 1);
  }
  return {
    command: typeof frame.command === "string" ? frame.command : "",
    args: strings(frame.args),
    env,
    cwd: typeof frame.cwd === "string" && frame.cwd.startsWith("/") ? frame.cwd : SANDBOX_HOME,
    cols: size(frame.cols, 80),
    rows: size(frame.rows, 24),
  };
}

export class InteractiveShells {
  private readonly tickets = new Map<string, { sessionId: string; expiresAt: number }>();
  private readonly sockets = new Set<WsSocket>();
  private ws?: Promise<WsServer | undefined>;

  private server(): Promise<WsServer | undefined> {
    this.ws ??= import(WS_PACKAGE).then(
      (module: WsModule) => new module.WebSocketServer({ noServer: true, maxPayload: MAX_FRAME_BYTES }),
      () => undefined,
    );
    return this.ws;
  }

  /**
   * E7: POST …/sessions/{sid}/interactive → `{url, token}` for the running session the route found (routes.ts: 410
   * when stopped, and the SDK resumes and asks again).
   */
  async open(session: SessionRecord, req: IncomingMessage, res: ServerResponse): Promise<void> {
    if (!(await this.server())) {
      throw new HttpError(
        422,
        "interactive_not_supported",
        "Interactive shells need the `ws` package next to the emulator; run commands with runCommand instead",
      );
    }
    const now = Date.now();
    for (const [key, ticket] of this.tickets) if (ticket.expiresAt <= now) this.tickets.delete(key);
    const token = randomBytes(24).toString("base64url");
    this.tickets.set(digest(token), { sessionId: session.id, expiresAt: now + TICKET_TTL_MS });
    const port = req.socket.localPort;
    const url = `ws://127.0.0.1:${port}/v2/sandboxes/sessions/${encodeURIComponent(session.id)}/interactive/connect`;
    sendJson(res, 200, { url, token });
  }

  /** The API server's `upgrade`: a valid ticket for a running session becomes a shell; anything else a 403. */
  async upgrade(state: ProgramState, req: IncomingMessage, socket: Duplex, head: Buffer): Promise<void> {
    socket.on("error", () => socket.destroy());
    const url = new URL(`http://127.0.0.1${req.url ?? "/"}`);
    const sessionId = decodeURIComponent(PATH_PATTERN.exec(url.pathname)?.[1] ?? "");
    const token = url.searchParams.get("token") ?? "";
    const ticket = this.tickets.get(digest(token));
    if (ticket) this.tickets.delete(digest(token));
    const session = state.registry.sessions.get(sessionId);
    const server = await this.server();
    if (!server || !ticket || ticket.sessionId !== sessionId || ticket.expiresAt <= Date.now()) {
      return refuse(socket, "403 Forbidden", "the interactive token is missing, used, expired or for another session");
    }
    if (session?.status !== "running" || !session.holder) return refuse(socket, "410 Gone", "the sandbox stopped");
    server.handleUpgrade(req, socket, head, (ws) => this.serve(state, sessionId, ws));
  }

  private serve(state: ProgramState, sessionId: string, ws: WsSocket): void {
    this.sockets.add(ws);
    let shell: SandboxProgram | undefined;
    let starting = false;
    let closed = false;
    /** Frames that arrive while the shell is starting, delivered once it runs. */
    const early: Array<[Buffer, boolean]> = [];
    const startTimer = setTimeout(() => ws.close(1008, "no start frame"), START_TIMEOUT_MS);
    const deliver = (program: SandboxProgram, data: Buffer, isBinary: boolean) => {
      if (isBinary) return void program.stdin?.write(ptyFrame(PTY_INPUT, data));
      const control = parseControl(data.toString("utf8"));
      if (control) program.stdin?.write(ptyFrame(PTY_RESIZE, Buffer.from(`${control.rows} ${control.cols}`)));
    };
    ws.on("close", () => {
      closed = true;
      clearTimeout(startTimer);
      this.sockets.delete(ws);
      if (shell) hangUp(shell);
    });
    ws.on("error", () => ws.terminate());
    ws.on("message", (data, isBinary) => {
      if (closed) return;
      if (shell) return deliver(shell, data, isBinary);
      if (starting) return void early.push([data, isBinary]);
      const start = isBinary ? undefined : parseStart(data.toString("utf8"));
      if (!start) return ws.close(1008, "the first frame must be a start frame");
      clearTimeout(startTimer);
      starting = true;
      void this.start(state, sessionId, start, ws).then(
        (child) => {
          if (closed) return hangUp(child);
          shell = child;
          for (const [frame, binary] of early.splice(0)) deliver(child, frame, binary);
        },
        (error: Error) => ws.close(1011, error.message.slice(0, 120)),
      );
    });
  }

  private async start(
    state: ProgramState,
    sessionId: string,
    start: StartFrame,
    ws: WsSocket,
  ): Promise<SandboxProgram> {
    const live = () => {
      const session = state.registry.sessions.get(sessionId);
      if (session?.status !== "running" || !session.holder) throw new Error("the sandbox stopped");
      return session;
    };
    const proxy = await networkEnv(state, live());
    const session = live();
    const program = await session.holder!.start.run({
      // The sandbox's python3, isolated from PYTHON* variables (the env is the shell's, not the helper's).
      argv: [
        "/usr/bin/python3",
        "-I",
        "-S",
        "-c",
        PTY_HELPER,
        String(start.rows),
        String(start.cols),
        start.cwd,
        start.command,
        ...start.args,
      ],
      env: commandEnv(state, session, start.env, false, proxy),
      // The helper changes to the asked cwd itself (a missing one leaves the shell in /, as a terminal would).
      cwd: "/",
      user: { uid: SANDBOX_USER.uid, gid: SANDBOX_USER.gid },
      stdin: true,
    });
    program.stdin!.on("error", () => {});
    const out = program.stdout;
    out.on("data", (chunk: Buffer) => {
      ws.send(chunk, () => {
        if (ws.bufferedAmount < HIGH_WATER_BYTES) out.resume();
      });
      if (ws.bufferedAmount >= HIGH_WATER_BYTES) out.pause();
    });
    // The helper's own failures (python3 missing, a bad cwd) are shown on the terminal like any output.
    program.stderr.on("data", (chunk: Buffer) => ws.send(chunk));
    void program.closed.then((exit) => {
      if (ws.readyState === 1) {
        ws.send(JSON.stringify({ type: "exit", code: exit }));
        ws.close(1000, "exited");
      }
    });
    return program;
  }

  /** Ends every connection (and with it every shell). */
  close(): void {
    for (const ws of this.sockets) ws.terminate();
    this.sockets.clear();
    void this.ws?.then((server) => server?.close());
  }
}

function parseControl(text: string): { cols: number; rows: number } | undefined {
  try {
    const frame = JSON.parse(text) as { type?: unknown; cols?: unknown; rows?: unknown };
    const ok = (v: unknown): v is number => typeof v === "number" && Number.isInteger(v) && v > 0 && v <= 1000;
    if (frame?.type === "resize" && ok(frame.cols) && ok(frame.rows)) return { cols: frame.cols, rows: frame.rows };
  } catch {
    // Not a control frame: ignored.
  }
  return undefined;
}

/** Closes the terminal's input (the helper hangs the shell up); kills the helper's group if it lingers. */
function hangUp(program: SandboxProgram): void {
  program.stdin?.end();
  const timer = setTimeout(() => program.kill(9), 5_000);
  timer.unref();
  void program.exited.then(() => clearTimeout(timer));
}

function refuse(socket: Duplex, status: string, reason: string): void {
  socket.end(`HTTP/1.1 ${status}\r\ncontent-type: text/plain\r\nconnection: close\r\n\r\n${reason}\n`);
}
