// The HTTP server: authentication (auth.ts) in front of everything, then the request log (method,
// path, status, ms) that tests and benches count round trips with, then fault injection, then
// routing. Only authorized requests are logged, in a bounded ring (request-log.ts), so a client
// without the token cannot grow the emulator's memory. The log never holds the query or headers, so
// no credential reaches it. Handler failures become JSON errors; nothing a client sends can crash
// the server.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { authorize } from "./auth.js";
import type { FaultRule, FaultTable } from "./faults.js";
import { HttpError, sendError } from "./http.js";
import type { RequestLog } from "./request-log.js";
import { matchRoute } from "./routes.js";
import type { EmulatorState } from "./state.js";

export type { RequestLogEntry } from "./request-log.js";

/** Makes the handler's output vanish and destroys the socket once the handler ends its response. */
function dropResponse(res: ServerResponse): void {
  const socket = res.socket;
  let ended = false;
  const callbackOf = (args: unknown[]) => args.find((a): a is () => void => typeof a === "function");
  Object.assign(res, {
    writeHead: () => res,
    flushHeaders: () => {},
    write: (...args: unknown[]) => {
      callbackOf(args)?.();
      return true;
    },
    end: (...args: unknown[]) => {
      if (!ended) {
        ended = true;
        callbackOf(args)?.();
        res.emit("finish");
        setImmediate(() => socket?.destroy());
      }
      return res;
    },
  });
}

async function applyFault(
  rule: FaultRule,
  req: IncomingMessage,
  res: ServerResponse,
): Promise<"handled" | "drop" | "run"> {
  if (rule.delayMs) await new Promise((r) => setTimeout(r, rule.delayMs));
  if (rule.reset) {
    req.socket.destroy();
    return "handled";
  }
  if (rule.status) {
    const headers: Record<string, string> =
      rule.retryAfterS !== undefined ? { "retry-after": String(rule.retryAfterS) } : {};
    const code = rule.status === 429 ? "rate_limited" : "injected_fault";
    sendError(res, new HttpError(rule.status, code, `Injected fault: status ${rule.status}`, headers));
    return "handled";
  }
  return rule.dropAfterCommit ? "drop" : "run";
}

export function createApiServer(state: EmulatorState, faults: FaultTable, log: RequestLog): Server {
  const server = createServer((req, res) => {
    const started = performance.now();
    // Prefixed, never resolved against a base: a path starting with "//" would otherwise name a host.
    const url = new URL(`http://127.0.0.1${(req.url ?? "/").startsWith("/") ? "" : "/"}${req.url ?? ""}`);
    const method = (req.method ?? "GET").toUpperCase();
    let dropped = false;
    void (async () => {
      try {
        authorize(state.scope, req, url);
        const entry = log.add(method, url.pathname);
        res.once("close", () => {
          entry.status = dropped || !res.headersSent ? 0 : res.statusCode;
          entry.ms = Math.round((performance.now() - started) * 100) / 100;
        });
        const rule = faults.take(method, url.pathname);
        if (rule) {
          const outcome = await applyFault(rule, req, res);
          if (outcome === "handled") return;
          if (outcome === "drop") {
            dropped = true;
            dropResponse(res);
          }
        }
        const match = matchRoute(method, url.pathname);
        if (!match) throw new HttpError(404, "not_found", `No such endpoint: ${method} ${url.pathname}`);
        if ("methodNotAllowed" in match)
          throw new HttpError(405, "method_not_allowed", `${method} is not allowed here`);
        await match.handler({ ...state, req, res, url, params: match.params });
      } catch (error) {
        if (!res.headersSent) sendError(res, error);
        else res.destroy();
      }
    })();
  });
  // WebSocket upgrades are only the interactive shells' connections, authorized by their own ticket.
  server.on("upgrade", (req, socket, head) => void state.interactive.upgrade(state, req, socket, head));
  // Requests Node's parser refuses (an unknown method, a malformed head) still get a JSON answer.
  server.on("clientError", (_error, socket) => {
    if (!socket.writable) return void socket.destroy();
    const body = JSON.stringify({ error: { code: "bad_request", message: "Malformed HTTP request" } });
    socket.end(
      `HTTP/1.1 400 Bad Request\r\ncontent-type: application/json\r\ncontent-length: ${body.length}\r\nconnection: close\r\n\r\n${body}`,
    );
  });
  return server;
}

export async function listen(server: Server, port: number): Promise<number> {
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, "127.0.0.1", () => resolve());
  });
  return (server.address() as AddressInfo).port;
}
