// What the job checks on the boxes themselves, so a reply is not taken on trust: the command's proof file is on
// VM2 and not on VM1; which gateway process instance answers (a wake must start a fresh one); what the plugin
// logged for the worker it provisioned; and that no secret reached VM1's disk (so none is in its checkpoints).
import type { Sandbox } from "@vercel/sandbox";
import { GatewayClient } from "../host/index.js";
import { GATEWAY_LOG, ROOT, sh } from "./vm1.js";

export const PROOF_FILE = "/tmp/main-job-proof.txt";

/** The proof file's lines on a box ("" when it has none). */
export async function proofsOn(box: Sandbox): Promise<string> {
  const done = await box.runCommand("sh", ["-c", `cat ${PROOF_FILE} 2>/dev/null || true`]);
  return (await done.stdout()).trim();
}

export async function gatewayInstance(publicOrigin: string, token: string): Promise<string> {
  return (await new GatewayClient({ baseUrl: publicOrigin, token, timeoutMs: 15_000 }).status()).instanceId;
}

/** The plugin's step lines for its leases (`vercel-sandbox vsb_…: <step>`), from VM1's gateway log. */
export async function workerSteps(vm1: Sandbox): Promise<string[]> {
  const out = await sh(
    vm1,
    "read the gateway log",
    `grep -oE 'vercel-sandbox vsb_[0-9a-f]+: .*' ${GATEWAY_LOG} || true`,
  );
  return out
    .split("\n")
    .filter(Boolean)
    .map((line) => line.replace(/^vercel-sandbox (vsb_[0-9a-f]{6})[0-9a-f]*/, "$1…").slice(0, 120));
}

// Reads the secrets from its environment and walks the gateway's tree (not node_modules): argv holds no secret.
export const SECRET_SCAN = `
const fs = require("node:fs"), path = require("node:path");
const secrets = ["S1", "S2", "S3"].map((k) => process.env[k]).filter(Boolean);
const hits = [];
const walk = (dir) => {
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) { if (entry.name !== "node_modules") walk(full); continue; }
    if (!entry.isFile() || fs.statSync(full).size > 64 * 1024 * 1024) continue;
    const text = fs.readFileSync(full, "latin1");
    if (secrets.some((s) => text.includes(s))) hits.push(full);
  }
};
walk(process.argv[1]);
process.stdout.write(JSON.stringify(hits));
`;

/** Files under VM1's gateway tree that hold any of `secrets`. */
export async function secretsOnDisk(vm1: Sandbox, secrets: string[]): Promise<string[]> {
  const env = Object.fromEntries(secrets.map((s, i) => [`S${i + 1}`, s]));
  const done = await vm1.runCommand({ cmd: "node", args: ["-e", SECRET_SCAN, ROOT], env });
  if (done.exitCode !== 0) throw new Error(`the secret scan failed on VM1: ${(await done.stderr()).slice(-500)}`);
  return JSON.parse((await done.stdout()) || "[]") as string[];
}
