// A connected approvals client for the Codex remote-exec spec. Core auto-denies a critical plugin approval
// ("no-approval-route") unless some operator client that can deliver approvals is connected; this child stays
// connected through the public SDK's operator-approvals client (openclaw/plugin-sdk/gateway-runtime of the
// gateway under test, argv[2]) with the harness's isolated environment, and prints one JSON line per approval
// it sees requested. The test decides: the n-th approval requested gets the n-th line of the decisions file
// (argv[3]; "allow-once" or "deny"), waited for up to a minute; the outcome is printed too. Every line carries
// `at` (epoch ms) for the spec's phase figures. It also makes the admin calls the spec asks for in the requests
// file (argv[7], one JSON `{method, params}` a line; e.g. chat.abort, which core allows only the run's own
// connection or an operator.admin one), printing one `response` line each.
import { pathToFileURL } from "node:url";

const [sdkPath, configPath, decisionsPath, url, tlsFingerprint, requestsPath] = process.argv.slice(2);
if (!sdkPath || !configPath || !decisionsPath || !url) {
  process.stderr.write("usage: approver.mjs <gateway-runtime.js> <openclaw.json> <decisions> <wss-url> [tls-sha256]\n");
  process.exit(2);
}
const { readFileSync } = await import("node:fs");
const sdk = await import(pathToFileURL(sdkPath).href);
// The token is read from the isolated config here, never passed on argv.
const config = JSON.parse(readFileSync(configPath, "utf8"));
const print = (line) => process.stdout.write(`${JSON.stringify({ ...line, at: Date.now() })}\n`);
// operator.admin: only an admin (or the requesting device) sees an approval another connection's turn raised.
const client = new sdk.GatewayClient({
  url,
  token: config.gateway?.auth?.token,
  ...(tlsFingerprint ? { tlsFingerprint } : {}),
  clientName: "gateway-client",
  clientDisplayName: "codex remote-exec spec approver",
  mode: "backend",
  caps: ["approvals"],
  scopes: ["operator.admin", "operator.approvals"],
  onHelloOk: () => print({ event: "ready" }),
  onConnectError: (error) => print({ event: "connect-error", message: String(error?.message ?? error) }),
  onEvent: (frame) => {
    if (typeof frame?.event !== "string" || !frame.event.includes("approval")) return;
    print({ event: frame.event, id: frame.payload?.id });
    if (frame.event === "plugin.approval.requested" && typeof frame.payload?.id === "string") {
      answer(frame.payload.id, requested++).catch((error) => print({ event: "resolve-error", message: String(error) }));
    }
  },
});
let requested = 0;

async function decisionFor(index) {
  const deadline = Date.now() + 60_000;
  for (;;) {
    let lines = [];
    try {
      lines = readFileSync(decisionsPath, "utf8").split("\n").filter(Boolean);
    } catch {}
    if (lines[index]) return lines[index].trim();
    if (Date.now() > deadline) return "deny";
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

async function answer(id, index) {
  const decision = await decisionFor(index);
  const result = await client.request("plugin.approval.resolve", { id, decision });
  print({ event: "resolved", id, decision, ok: Boolean(result) });
}
let handled = 0;
async function serveRequests() {
  if (!requestsPath) return;
  for (;;) {
    let lines = [];
    try {
      lines = readFileSync(requestsPath, "utf8").split("\n").filter(Boolean);
    } catch {}
    while (handled < lines.length) {
      const index = handled++;
      try {
        const { method, params } = JSON.parse(lines[index]);
        await client.request(method, params);
        print({ event: "response", index, ok: true });
      } catch (error) {
        print({ event: "response", index, ok: false, message: String(error?.message ?? error) });
      }
    }
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}
client.start();
serveRequests();
const stop = () => {
  client.stop?.();
  process.exit(0);
};
process.on("SIGTERM", stop);
process.on("SIGINT", stop);
