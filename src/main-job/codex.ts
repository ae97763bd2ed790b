// The main job in Codex mode (`npm start -- --codex`, issue 20): seed 000 as seed 000 runs it. VM1 runs the newest
// gateway that has a matching `@openclaw/codex`, with Codex's app-server (on VM1, with the model's auth) pointed at
// the scripted model's Responses endpoint; the session's placement is `remote-exec` on VM2, where the gateway
// launches Codex's managed exec-server after an approval per launch. The approvals surface is a small client on VM1
// (the user's "allow" in seed 000's Slack thread): it allows each launch once and logs what it decided.
import type { Sandbox } from "@vercel/sandbox";
import { CODEX_PLUGIN_SPEC, FIREWALL_KEY_PLACEHOLDER } from "./codex-config.js";
import { openclaw, openclawEnv, ROOT, sh } from "./vm1.js";

const APPROVER = `${ROOT}/approver.mjs`;
/** What the approver decided, one JSON line each (no secret: approval ids and decisions). */
export const APPROVER_LOG = `${ROOT}/logs/approvals.jsonl`;

/**
 * VM1's approvals client: core denies a critical exec-server approval at once ("no-approval-route") unless an
 * operator client that delivers approvals is connected. It waits for the gateway, connects on loopback with the
 * token from its environment (never argv or disk), allows each plugin approval requested once (in this job, only
 * Codex's exec-server launches ask), and logs it.
 */
const APPROVER_SCRIPT = `import { appendFileSync } from "node:fs";
import { pathToFileURL } from "node:url";
const [sdkPath, port, logPath] = process.argv.slice(2);
const log = (line) => appendFileSync(logPath, JSON.stringify({ ...line, at: Date.now() }) + "\\n");
for (;;) {
  const ok = await fetch("http://127.0.0.1:" + port + "/readyz").then((r) => r.ok, () => false);
  if (ok) break;
  await new Promise((resolve) => setTimeout(resolve, 500));
}
const sdk = await import(pathToFileURL(sdkPath).href);
const client = new sdk.GatewayClient({
  url: "ws://127.0.0.1:" + port,
  token: process.env.OPENCLAW_GATEWAY_TOKEN,
  clientName: "gateway-client",
  clientDisplayName: "main job approver",
  mode: "backend",
  caps: ["approvals"],
  scopes: ["operator.admin", "operator.approvals"],
  onHelloOk: () => log({ event: "ready" }),
  onConnectError: (error) => log({ event: "connect-error", message: String(error?.message ?? error) }),
  onEvent: (frame) => {
    if (frame?.event !== "plugin.approval.requested" || typeof frame.payload?.id !== "string") return;
    const id = frame.payload.id;
    log({ event: "requested", id });
    client.request("plugin.approval.resolve", { id, decision: "allow-once" }).then(
      () => log({ event: "resolved", id, decision: "allow-once" }),
      (error) => log({ event: "resolve-error", id, message: String(error?.message ?? error) }),
    );
  },
});
client.start();
const stop = () => { client.stop?.(); process.exit(0); };
process.on("SIGTERM", stop);
process.on("SIGINT", stop);
`;

/** The shell line that starts the approver in the background (part of the gateway's start, at boot and every wake). */
export function approverLine(port: number): string {
  const sdk = `${ROOT}/app/node_modules/openclaw/dist/plugin-sdk/gateway-runtime.js`;
  return `node ${APPROVER} ${sdk} ${port} ${APPROVER_LOG} >> ${ROOT}/logs/approver.out 2>&1 &`;
}

/**
 * Installs @openclaw/codex from the registry (after the config is written: an install records itself there), the
 * OpenAI auth profile with the placeholder (on stdin, not argv), and the approver script.
 */
export async function installCodex(box: Sandbox): Promise<void> {
  await openclaw(box, "openclaw plugins install @openclaw/codex", [
    "plugins",
    "install",
    CODEX_PLUGIN_SPEC,
    "--accept-capabilities",
  ]);
  await sh(box, "remove the install's npm cache", `rm -rf ${ROOT}/home/.npm`);
  await box.writeFiles([{ path: APPROVER, content: Buffer.from(APPROVER_SCRIPT) }]);
  await pasteAuthPlaceholder(box);
}

/** The OpenAI auth profile Codex remote-exec requires, holding the placeholder (not a secret). */
async function pasteAuthPlaceholder(box: Sandbox): Promise<void> {
  await sh(
    box,
    "openclaw models auth paste-api-key",
    `printf '%s\\n' '${FIREWALL_KEY_PLACEHOLDER}' | node ${ROOT}/app/node_modules/openclaw/openclaw.mjs models auth paste-api-key --provider openai`,
    openclawEnv(),
  );
}

/** How many exec-server launches the approver allowed, from its log on VM1. */
export async function approvalsAllowed(box: Sandbox): Promise<number> {
  const text = await sh(box, "read the approvals log", `cat ${APPROVER_LOG} 2>/dev/null || true`);
  return text.split("\n").filter((line) => line.includes('"event":"resolved"')).length;
}
