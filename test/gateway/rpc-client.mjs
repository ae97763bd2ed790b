// The harness's persistent gateway client: one connection per started gateway, through the public SDK's
// GatewayClient (openclaw/plugin-sdk/gateway-runtime of the gateway under test, argv[2]) with the options
// `openclaw gateway call` uses (client "cli", mode "cli", role operator, the CLI's default operator scopes) and the
// harness's isolated environment, so it is the same device as the CLI's calls. A fresh `openclaw gateway call`
// process costs 1.7-2.0 s and 1.3 s of CPU per RPC; this child pays the SDK's import once.
//
// stdin: one JSON request a line, `{ id, method, params, timeoutMs }`. stdout: one JSON line each, `{ event:
// "ready" }` once connected, `{ event: "connect-error", message }` for each failed attempt, and per request
// `{ id, ok: true, payload }` or `{ id, ok: false, error: { message, code, details } }`. The token is read from
// the isolated config here, never passed on argv.
import { readFileSync } from "node:fs";
import { createInterface } from "node:readline";
import { pathToFileURL } from "node:url";

const [sdkPath, configPath, url, tlsFingerprint] = process.argv.slice(2);
if (!sdkPath || !configPath || !url) {
  process.stderr.write("usage: rpc-client.mjs <gateway-runtime.js> <openclaw.json> <ws-url> [tls-sha256]\n");
  process.exit(2);
}
const sdk = await import(pathToFileURL(sdkPath).href);
const config = JSON.parse(readFileSync(configPath, "utf8"));
const print = (line) => process.stdout.write(`${JSON.stringify(line)}\n`);
const SCOPES = [
  "operator.admin",
  "operator.read",
  "operator.write",
  "operator.approvals",
  "operator.questions",
  "operator.pairing",
  "operator.talk.secrets",
];
// Requests wait for a live connection: after a gateway restart the client reconnects by itself, as a new CLI
// process would connect anew.
let live = true;
let connected = () => {};
let ready;
const disconnected = () => {
  if (!live) return;
  live = false;
  ready = new Promise((resolve) => {
    connected = () => {
      live = true;
      resolve();
    };
  });
};
disconnected();
const client = new sdk.GatewayClient({
  url,
  token: config.gateway?.auth?.token,
  ...(tlsFingerprint ? { tlsFingerprint } : {}),
  clientName: "cli",
  clientDisplayName: "gateway spec harness",
  mode: "cli",
  role: "operator",
  scopes: SCOPES,
  // As the CLI connects to a loopback gateway with its shared token: without a device identity, so no pairing.
  deviceIdentity: null,
  onHelloOk: () => {
    print({ event: "ready" });
    connected();
  },
  onConnectError: (error) => print({ event: "connect-error", message: String(error?.message ?? error) }),
  onClose: () => disconnected(),
});
client.start();

/** The error as `openclaw gateway call --json` prints it (its formatGatewayClientRequestErrorJson). */
function errorOf(error) {
  if (error?.name !== "GatewayClientRequestError") {
    return { type: "gateway_transport_error", message: String(error?.message ?? error) };
  }
  return {
    type: "gateway_request_error",
    code: error.gatewayCode,
    message: error.message,
    ...(error.details !== undefined ? { details: error.details } : {}),
    retryable: error.retryable,
    ...(error.retryAfterMs !== undefined ? { retryAfterMs: error.retryAfterMs } : {}),
  };
}

async function serve(line) {
  let request;
  try {
    request = JSON.parse(line);
  } catch {
    return;
  }
  const { id, method, params, timeoutMs } = request;
  try {
    await ready;
    const payload = await client.request(method, params ?? {}, { timeoutMs: timeoutMs ?? 30_000 });
    print({ id, ok: true, payload: payload ?? null });
  } catch (error) {
    print({ id, ok: false, error: errorOf(error) });
  }
}

createInterface({ input: process.stdin }).on("line", (line) => {
  serve(line);
});
const stop = () => {
  client.stop?.();
  process.exit(0);
};
process.stdin.on("end", stop);
process.on("SIGTERM", stop);
process.on("SIGINT", stop);
