// Runs the reference host (openclaw-vercel-sandbox/reference-host) as a plain Node HTTP server. Configuration
// comes from the environment; nothing secret is printed. A host whose `/message` takes no secret binds to loopback only.
// Scheduled wake: with WAKE_STATE_DIR the accepted wake snapshot survives a restart of this server (a file,
// replaced atomically); WAKE_AHEAD_MS is how long before the gateway's wake time it starts waking VM1.
import { FileWakeStore } from "openclaw-vercel-sandbox/host";
import { createHost, serve } from "openclaw-vercel-sandbox/reference-host";

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

const gatewayUrl = need("GATEWAY_URL");
const wakeAheadMs = milliseconds("WAKE_AHEAD_MS");
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
const hostname = process.env.HOST ?? "127.0.0.1";
const server = await serve(host, Number(process.env.PORT ?? 3000), hostname);
const address = server.address();
console.log(`host listening on http://${hostname}:${typeof address === "object" && address ? address.port : ""}`);
for (const signal of ["SIGINT", "SIGTERM"] as const) {
  process.once(signal, () => {
    host.stop();
    server.close(() => process.exit(0));
  });
}
