// Runs the reference host as a plain Node HTTP server (on Vercel, export `createHost(...)` as the function's
// default `{ fetch }` instead). Configuration comes from the environment; nothing secret is printed.
import http from "node:http";
import { createHost } from "./host.js";

function need(name: string): string {
  const value = process.env[name];
  if (!value) throw new Error(`set ${name}`);
  return value;
}

/** Adapts a Fetch API handler to node:http. */
export function serve(handler: { fetch(request: Request): Promise<Response> }, port: number, hostname = "127.0.0.1") {
  const server = http.createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const headers = new Headers();
    for (const [key, value] of Object.entries(req.headers)) if (typeof value === "string") headers.set(key, value);
    const request = new Request(`http://${hostname}${req.url}`, {
      method: req.method ?? "GET",
      headers,
      ...(chunks.length > 0 ? { body: Buffer.concat(chunks) } : {}),
    });
    const response = await handler.fetch(request);
    res.writeHead(response.status, Object.fromEntries(response.headers));
    res.end(Buffer.from(await response.arrayBuffer()));
  });
  return new Promise<http.Server>((resolve) => server.listen(port, hostname, () => resolve(server)));
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const gatewayUrl = need("GATEWAY_URL");
  const host = createHost({
    gatewayUrl,
    gatewayToken: need("GATEWAY_TOKEN"),
    notifySecret: need("NOTIFY_SECRET"),
    connection: { token: need("VERCEL_TOKEN"), teamId: need("VERCEL_TEAM_ID"), projectId: need("VERCEL_PROJECT_ID") },
    vmName: need("VM1_NAME"),
    start: { cmd: "sh", args: ["-c", need("GATEWAY_START_COMMAND")] },
    ready: async () => (await fetch(new URL("/readyz", gatewayUrl)).catch(() => undefined))?.ok === true,
  });
  await serve(host, Number(process.env.PORT ?? 3000));
}
