// Codex `remote-exec` on our node lease (issue 20): the gateway runs Codex's app-server against a scripted
// Responses server on loopback (no model, no key), a session on a worktree is dispatched to a `vercel-sandbox`
// profile, and the command Codex runs executes on VM2 through the managed exec-server the gateway launches
// there, after an approval the test gives per attempt. One gateway, one cold VM2 reused by every case.
import { randomBytes } from "node:crypto";
import { Sandbox } from "@vercel/sandbox";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Approver, CODEX_GATEWAY_VERSION, codexGatewayConfig, prepareCodexGateway } from "./codex/codex-gateway.js";
import { type ResponsesServer, RUN_MARKER, startResponsesServer } from "./codex/responses-server.js";
import { waitFor } from "./wait.js";
import { PROFILE, WorkerGateway } from "./worker-gateway.js";

const SESSION_KEY = "agent:main:codex-remote-exec";
const worker = new WorkerGateway(CODEX_GATEWAY_VERSION);
const timings: Record<string, number> = {};
let approver: Approver | undefined;
let sent = 0;
const nonce = randomBytes(8).toString("hex");
/** A made-up OpenAI key for the auth profile Codex remote-exec requires; only the scripted server sees it. */
const apiKey = `sk-scripted-${randomBytes(16).toString("hex")}`;
let server: ResponsesServer | undefined;
let token = "";
let repo = "";

function scripted(): ResponsesServer {
  if (!server) throw new Error("the scripted Responses server was not started (see beforeAll)");
  return server;
}

async function vm2(): Promise<Sandbox> {
  const boxes = await worker.sandboxes();
  if (boxes.length !== 1) throw new Error(`expected one sandbox, found ${boxes.length}`);
  return Sandbox.get({ ...worker.emulator.credentials, fetch: worker.emulator.fetch, name: boxes[0]!.name });
}

function approvals(): Approver {
  if (!approver) throw new Error("the approver was not started (see beforeAll)");
  return approver;
}

/** Model requests whose history carried a command output containing `marker`. */
function outputsWith(marker: string): string[] {
  return scripted()
    .requests()
    .flatMap((r) => (r.toolOutput?.includes(marker) ? [r.toolOutput] : []));
}

/** chat.send to the session (the Control UI's path), then the wait until its run is no longer running. */
async function turn(text: string, decision: "allow-once" | "deny"): Promise<string> {
  await approvals().decide(decision);
  sent += 1;
  await worker.gw.callOk("chat.send", {
    sessionKey: SESSION_KEY,
    message: text,
    idempotencyKey: `turn-${sent}-${nonce}`,
  });
  return waitFor(
    "the Codex turn to end",
    async () => {
      const described = await worker.gw.callOk<{ session?: { status?: string; lastRunId?: string } }>(
        "sessions.describe",
        { key: SESSION_KEY },
      );
      const session = described.session;
      return session?.lastRunId === `turn-${sent}-${nonce}` && session.status !== "running"
        ? session.status
        : undefined;
    },
    { timeoutMs: 600_000, intervalMs: 1_000 },
  );
}

beforeAll(async () => {
  server = await startResponsesServer("127.0.0.1");
  await worker.start(codexGatewayConfig(server.baseUrl), {}, (gw) => prepareCodexGateway(gw, apiKey));
  token = ((await worker.gw.readConfig()) as { gateway: { auth: { token: string } } }).gateway.auth.token;
  approver = await Approver.start(worker.gw, worker.host?.fingerprint ?? "");
  repo = await worker.createRepo("codex remote-exec spec");
}, 1_200_000);

afterAll(async () => {
  process.stderr.write(`[codex remote-exec] ${JSON.stringify({ ...worker.timings, ...timings })}\n`);
  try {
    await approver?.stop();
    await worker.dispose();
  } finally {
    await server?.close();
  }
}, 240_000);

function sandboxCreates(): number {
  return worker.emulator.requests().filter((r) => r.method === "POST" && /^\/v[23]\/sandboxes\/?$/.test(r.path)).length;
}

describe(`Codex remote-exec on openclaw ${CODEX_GATEWAY_VERSION}`, () => {
  it("the dispatched session's command runs on VM2 as its account, after an allow-once approval", {
    timeout: 1_800_000,
  }, async () => {
    const gw = worker.gw;
    await gw.callOk("sessions.create", { key: SESSION_KEY, worktree: true, cwd: repo, worktreeName: "codex" }, 120_000);
    const dispatching = performance.now();
    const placed = await gw.callOk<{ placement?: unknown }>(
      "sessions.dispatch",
      { key: SESSION_KEY, profileId: PROFILE },
      1_200_000,
    );
    timings.dispatchMs = Math.round(performance.now() - dispatching);
    process.stderr.write(`[codex remote-exec] placement ${gw.redact(JSON.stringify(placed.placement))}\n`);
    expect((await worker.sandboxes()).map((b) => b.status)).toEqual(["running"]);
    // A file only VM2 holds: its nonce is in no prompt, so only a command run there can return it.
    await (await vm2()).writeFiles([{ path: "/tmp/codex-proof", content: Buffer.from(`${nonce}\n`) }]);
    const started = performance.now();
    const status = await turn(`${RUN_MARKER} cat /tmp/codex-proof; id -un; echo on-stderr >&2`, "allow-once");
    timings.turnMs = Math.round(performance.now() - started);
    process.stderr.write(
      `[codex remote-exec] first turn ${status}; approver ${JSON.stringify(approvals().events())}\n`,
    );
    // The one approval was Codex's exec-server launch on the node placement (remote-exec; no worker child).
    expect(approvals().requested()).toBe(1);
    expect(approvals().resolved()).toEqual(["allow-once"]);
    const [output] = outputsWith(nonce);
    expect(output).toMatch(/^vercel-sandbox$/m);
    expect(output).toContain("on-stderr");
  });

  it("a second turn asks for a new approval and reuses the same VM2", { timeout: 900_000 }, async () => {
    const before = await worker.sandboxes();
    const created = sandboxCreates();
    const marker = randomBytes(6).toString("hex");
    const started = performance.now();
    await turn(`${RUN_MARKER} echo ${marker}-$(cat /tmp/codex-proof)`, "allow-once");
    timings.secondTurnMs = Math.round(performance.now() - started);
    expect(approvals().resolved()).toEqual(["allow-once", "allow-once"]);
    expect(outputsWith(`${marker}-${nonce}`)).toHaveLength(1);
    expect(sandboxCreates()).toBe(created);
    expect((await worker.sandboxes()).map((b) => b.name)).toEqual(before.map((b) => b.name));
  });

  it("an attempt whose approval is denied runs nothing on VM2", { timeout: 900_000 }, async () => {
    const marker = `denied-${randomBytes(6).toString("hex")}`;
    await turn(`${RUN_MARKER} touch /tmp/${marker}; echo ${marker}`, "deny");
    expect(approvals().resolved()).toEqual(["allow-once", "allow-once", "deny"]);
    expect(outputsWith(`${marker}\n`)).toEqual([]);
    const probe = await (await vm2()).runCommand({ cmd: "ls", args: ["/tmp"] });
    expect(await probe.stdout()).not.toContain(marker);
  });

  it("no model key or gateway token is anywhere on VM2's disk", { timeout: 600_000 }, async () => {
    const box = await vm2();
    // The proof file's nonce is the control: the same scan must find it where the test wrote it.
    const scan = await box.runCommand({
      cmd: "sh",
      args: [
        "-c",
        'for s in "$@"; do echo "--"; grep -rlF --exclude-dir=proc --exclude-dir=sys --exclude-dir=dev -- "$s" / 2>/dev/null; done; echo done',
        "sh",
        nonce,
        apiKey,
        token,
      ],
      sudo: true,
    });
    const [control, key, gatewayToken] = (await scan.stdout()).split("--\n").slice(1);
    expect(control?.split("\n")).toContain("/tmp/codex-proof");
    expect(key).toBe("");
    expect(gatewayToken).toBe("done\n");
  });
});
