// Serves the host (host.ts) as a plain Node HTTP server, configured from the environment; nothing secret is
// printed. A host whose `/message` takes no secret binds to loopback only. Scheduled wake: with WAKE_STATE_DIR the
// accepted wake snapshot survives a restart (a file, replaced atomically); WAKE_AHEAD_MS is how long before the
// gateway's wake time it starts waking VM1. On Vercel, export `createHost(...)` from a route instead.
import http from "node:http";
import { FileWakeStore } from "openclaw-vercel-sandbox/host";
import { BodyTooLargeError, createHost, MAX_BODY_BYTES, readBounded } from "./host.js";

const need = (name: string): string => {
  const value = process.env[name];
  if (!value) throw new Error(`set ${name}`);
  return value;
};
const milliseconds = (name: string): number | undefined => {
  const value = process.env[name];
  if (value === undefined) return undefined;
  if (!/^[0-9]+$/.test(value)) throw new Error(`${name} must be a whole number of milliseconds`);
  return Number(value);
};
const isLoopback = (hostname: string) =>
  hostname === "localhost" || hostname === "::1" || /^127\.\d+\.\d+\.\d+$/.test(hostname);

const gatewayUrl = need("GATEWAY_URL");
const wakeAheadMs = milliseconds("WAKE_AHEAD_MS");
const hostname = process.env.HOST ?? "127.0.0.1";
const host = createHost({
  gatewayUrl,
  gatewayToken: need("GATEWAY_TOKEN"),
  notifySecret: need("NOTIFY_SECRET"),
  ...(process.env.MESSAGE_SECRET ? { messageSecret: process.env.MESSAGE_SECRET } : {}),
  connection: { token: need("VERCEL_TOKEN"), teamId: need("VERCEL_TEAM_ID"), projectId: need("VERCEL_PROJECT_ID") },
  vmName: need("VM1_NAME"),
  start: { cmd: "sh", args: ["-c", need("GATEWAY_START_COMMAND")] },
  ready: async () => (await fetch(new URL("/readyz", gatewayUrl)).catch(() => undefined))?.ok === true,
  ...(process.env.WAKE_STATE_DIR ? { wakeStore: new FileWakeStore(process.env.WAKE_STATE_DIR) } : {}),
  ...(wakeAheadMs !== undefined ? { wakeAheadMs } : {}),
});
if (!host.authenticatesMessages && !isLoopback(hostname)) {
  // Anyone who reaches an open `/message` could wake VM1.
  throw new Error(
    `refusing to serve /message without a secret on ${hostname}: set MESSAGE_SECRET, or bind to loopback`,
  );
}

const server = http.createServer(async (req, res) => {
  let body: Buffer;
  try {
    // destroyOnReturn: false keeps the socket open to answer 413 when the body is refused midway.
    body = await readBounded(req.iterator({ destroyOnReturn: false }), req.headers["content-length"]);
  } catch (error) {
    if (!(error instanceof BodyTooLargeError)) return void res.destroy();
    res.writeHead(413, { "content-type": "application/json", connection: "close" });
    res.end(JSON.stringify({ error: "body too large", limitBytes: MAX_BODY_BYTES }), () => {
      // Discard what still comes for a moment (closing with unread bytes could lose the 413), then cut it.
      req.socket.end();
      req.resume();
      setTimeout(() => req.socket.destroy(), 2_000).unref();
    });
    return;
  }
  const headers = new Headers();
  for (const [key, value] of Object.entries(req.headers)) {
    if (typeof value === "string" && key !== "transfer-encoding") headers.set(key, value);
  }
  const request = new Request(`http://${hostname}${req.url}`, {
    method: req.method ?? "GET",
    headers,
    ...(body.length > 0 ? { body } : {}),
  });
  const response = await host.fetch(request);
  res.writeHead(response.status, Object.fromEntries(response.headers));
  res.end(Buffer.from(await response.arrayBuffer()));
});
server.listen(Number(process.env.PORT ?? 3000), hostname, () => {
  const address = server.address();
  const port = typeof address === "object" && address ? address.port : process.env.PORT;
  console.log(`host listening on http://${hostname}:${port}`);
});
for (const signal of ["SIGINT", "SIGTERM"] as const) {
  process.once(signal, () => {
    host.stop();
    server.close(() => process.exit(0));
  });
}
