// Runs the reference host (src/reference-host) as a plain Node HTTP server. Configuration comes from the
// environment; nothing secret is printed. A host whose `/message` takes no secret binds to loopback only.
import { createHost, serve } from "../../src/reference-host/index.js";

const need = (name: string): string => {
  const value = process.env[name];
  if (!value) throw new Error(`set ${name}`);
  return value;
};

const gatewayUrl = need("GATEWAY_URL");
const host = createHost({
  gatewayUrl,
  gatewayToken: need("GATEWAY_TOKEN"),
  notifySecret: need("NOTIFY_SECRET"),
  ...(process.env.MESSAGE_SECRET ? { messageSecret: process.env.MESSAGE_SECRET } : {}),
  connection: { token: need("VERCEL_TOKEN"), teamId: need("VERCEL_TEAM_ID"), projectId: need("VERCEL_PROJECT_ID") },
  vmName: need("VM1_NAME"),
  start: { cmd: "sh", args: ["-c", need("GATEWAY_START_COMMAND")] },
  ready: async () => (await fetch(new URL("/readyz", gatewayUrl)).catch(() => undefined))?.ok === true,
});
await serve(host, Number(process.env.PORT ?? 3000), process.env.HOST ?? "127.0.0.1");
