// Serves the reference host (or any Fetch API handler) as a plain Node HTTP server (on Vercel, export
// `createHost(...)` as the function's default `{ fetch }` instead). Bodies are bounded before they are read; a
// host whose `/message` takes no secret binds to loopback only. examples/host/server.ts runs it from the
// environment.
import http from "node:http";
import { BodyTooLargeError, DEFAULT_MAX_BODY_BYTES, readBounded } from "./guards.js";

export interface Handler {
  fetch(request: Request): Promise<Response>;
  /** True when `/message` requires the shared secret; without it, serve() binds to loopback only. */
  authenticatesMessages?: boolean;
}

/** Refused: serving an unauthenticated `/message` beyond loopback would let anyone wake VM1. */
export class InsecureBindError extends Error {
  constructor(readonly hostname: string) {
    super(`refusing to serve /message without a secret on ${hostname}: set MESSAGE_SECRET, or bind to 127.0.0.1`);
    this.name = "InsecureBindError";
  }
}

/** How long a refused connection may keep sending before it is cut (its response is already written). */
const LINGER_MS = 2_000;

export function isLoopback(hostname: string): boolean {
  return hostname === "localhost" || hostname === "::1" || /^127\.\d+\.\d+\.\d+$/.test(hostname);
}

/** Answers 413 and closes the connection without reading the rest of the body (what arrives is discarded). */
function refuseBody(req: http.IncomingMessage, res: http.ServerResponse, error: BodyTooLargeError) {
  const body = JSON.stringify({ error: "body too large", limitBytes: error.limitBytes });
  res.writeHead(413, {
    "content-type": "application/json",
    "content-length": Buffer.byteLength(body),
    connection: "close",
  });
  res.end(body, () => {
    // Closing with unread bytes would reset the connection and could lose the 413 at the client: end our side,
    // discard what still comes for a moment, then cut it.
    req.socket.end();
    req.resume();
    setTimeout(() => req.socket.destroy(), LINGER_MS).unref();
  });
}

/** Adapts a Fetch API handler to node:http, reading at most `maxBodyBytes` of each body. */
export function serve(
  handler: Handler,
  port: number,
  hostname = "127.0.0.1",
  { maxBodyBytes = DEFAULT_MAX_BODY_BYTES }: { maxBodyBytes?: number } = {},
) {
  if (!isLoopback(hostname) && handler.authenticatesMessages !== true) {
    return Promise.reject(new InsecureBindError(hostname));
  }
  const server = http.createServer(async (req, res) => {
    let body: Buffer;
    try {
      body = await readBounded(req.iterator({ destroyOnReturn: false }), req.headers["content-length"], maxBodyBytes);
    } catch (error) {
      if (error instanceof BodyTooLargeError) return refuseBody(req, res, error);
      res.destroy();
      return;
    }
    const headers = new Headers();
    for (const [key, value] of Object.entries(req.headers)) {
      // The body is whole now: its framing header does not apply to the Request built from it.
      if (typeof value === "string" && key !== "transfer-encoding") headers.set(key, value);
    }
    const request = new Request(`http://${hostname}${req.url}`, {
      method: req.method ?? "GET",
      headers,
      ...(body.length > 0 ? { body } : {}),
    });
    const response = await handler.fetch(request);
    res.writeHead(response.status, Object.fromEntries(response.headers));
    res.end(Buffer.from(await response.arrayBuffer()));
  });
  return new Promise<http.Server>((resolve) => server.listen(port, hostname, () => resolve(server)));
}
