// Codex `remote-exec` on our node lease (issue 20): the gateway runs Codex's app-server against a scripted
// Responses server on loopback (no model, no key), a session on a worktree is dispatched to a `vercel-sandbox`
// profile, and the command Codex runs executes on VM2 through the managed exec-server the gateway launches
// there, after an approval the test gives per attempt. One gateway, one VM2 reused by every Codex case; the
// node disconnect goes last of them. After them the release's smoke (versions.test.ts's, for this release).
// What VM2 holds is read with separate emulator commands (codex/vm2-probe.ts).
import { randomBytes } from "node:crypto";
import { Sandbox } from "@vercel/sandbox";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Approver, CODEX_GATEWAY_VERSION, codexGatewayConfig, prepareCodexGateway } from "./codex/codex-gateway.js";
import { type ResponsesServer, RUN_MARKER, STREAM_MARKER, startResponsesServer } from "./codex/responses-server.js";
import { alive, enrollmentSecretsDuring, gone, nodePids, pidsOf, scanDisk, sh } from "./codex/vm2-probe.js";
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
/** The one-time enrollment secrets read from VM2's enrollment program while the dispatch ran. */
/** Set once the first case placed the session on VM2: the later cases stand on that placement. */
let placedOnVm2 = false;
let enrollmentSecrets: Partial<Record<"OPENCLAW_VSB_SETUP_CODE" | "OPENCLAW_VSB_BOOTSTRAP_TOKEN", string>> = {};

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

/** chat.send to the session (the Control UI's path) after queueing the decision for its approval; its run id. */
async function send(text: string, decision: "allow-once" | "deny"): Promise<string> {
  await approvals().decide(decision);
  sent += 1;
  const runId = `turn-${sent}-${nonce}`;
  await worker.gw.callOk("chat.send", { sessionKey: SESSION_KEY, message: text, idempotencyKey: runId });
  return runId;
}

/** Waits until run `runId` is the session's last run and no longer running; its status then. */
function settled(runId: string, timeoutMs = 600_000): Promise<string> {
  return waitFor(
    "the Codex turn to end",
    async () => {
      const described = await worker.gw.callOk<{ session?: { status?: string; lastRunId?: string } }>(
        "sessions.describe",
        { key: SESSION_KEY },
      );
      const session = described.session;
      return session?.lastRunId === runId && session.status !== "running" ? String(session.status) : undefined;
    },
    { timeoutMs, intervalMs: 1_000 },
  );
}

async function turn(text: string, decision: "allow-once" | "deny"): Promise<string> {
  return settled(await send(text, decision));
}

/** A Codex command that writes its shell's and its background child's pids to /tmp/<tag>.pids, then waits. */
function lingering(tag: string): string {
  return `${RUN_MARKER} echo $$ > /tmp/${tag}.pids; sleep 600 & echo $! >> /tmp/${tag}.pids; wait`;
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
    const { result: placed, secrets } = await enrollmentSecretsDuring(
      vm2,
      gw.callOk<{ placement?: unknown }>("sessions.dispatch", { key: SESSION_KEY, profileId: PROFILE }, 1_200_000),
    );
    enrollmentSecrets = secrets;
    timings.dispatchMs = Math.round(performance.now() - dispatching);
    process.stderr.write(`[codex remote-exec] placement ${gw.redact(JSON.stringify(placed.placement))}\n`);
    expect((await worker.sandboxes()).map((b) => b.status)).toEqual(["running"]);
    placedOnVm2 = true;
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
    expect(placedOnVm2, "the first case must place the session on VM2").toBe(true);
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
    expect(placedOnVm2, "the first case must place the session on VM2").toBe(true);
    const marker = `denied-${randomBytes(6).toString("hex")}`;
    await turn(`${RUN_MARKER} touch /tmp/${marker}; echo ${marker}`, "deny");
    expect(approvals().resolved()).toEqual(["allow-once", "allow-once", "deny"]);
    expect(outputsWith(`${marker}\n`)).toEqual([]);
    const probe = await (await vm2()).runCommand({ cmd: "ls", args: ["/tmp"] });
    expect(await probe.stdout()).not.toContain(marker);
  });

  it("a command's stdout and stderr stream back in order while it still runs", { timeout: 900_000 }, async () => {
    expect(placedOnVm2, "the first case must place the session on VM2").toBe(true);
    const release = `release-${randomBytes(6).toString("hex")}`;
    const from = scripted().requests().length;
    const outputs = () =>
      scripted()
        .requests()
        .slice(from)
        .flatMap((r) => (r.toolOutput === undefined ? [] : [{ at: r.at, text: r.toolOutput }]));
    const seen = () =>
      outputs()
        .map((o) => o.text)
        .join("\n");
    const sentAt = Date.now();
    const runId = await send(
      `${STREAM_MARKER} for i in 1 2 3; do echo out-$i; echo err-$i >&2; sleep 1; done; while [ ! -e /tmp/${release} ]; do sleep 0.2; done; echo done-$((6*7))`,
      "allow-once",
    );
    // The command cannot exit before /tmp/<release> exists on VM2, written only after every line came back.
    await waitFor(
      "all six lines back through the gateway while the command runs on VM2",
      async () => (["out-3", "err-3"].every((line) => seen().includes(line)) ? true : undefined),
      { timeoutMs: 300_000, intervalMs: 500 },
    );
    expect(seen()).not.toContain("done-42");
    await (await vm2()).writeFiles([{ path: `/tmp/${release}`, content: Buffer.from("") }]);
    await settled(runId);
    const text = seen();
    for (const stream of ["out", "err"]) {
      const at = [1, 2, 3].map((i) => text.indexOf(`${stream}-${i}`));
      expect(at.every((index, k) => index >= 0 && (k === 0 || index > at[k - 1]!))).toBe(true);
    }
    expect(text.indexOf("out-3")).toBeLessThan(text.indexOf("done-42"));
    expect(approvals().resolved().at(-1)).toBe("allow-once");
    // Phases of this remote-exec turn (figures only): approval asked, first model request (the exec-server is
    // registered with Codex by then), first output line back, reply.
    const approval = approvals()
      .events()
      .findLast((e) => e.event === "plugin.approval.requested");
    const firstModel = scripted()
      .requests()
      .slice(from)
      .find((r) => r.toolCall)?.at;
    const firstLine = outputs().find((o) => o.text.includes("out-1"))?.at;
    Object.assign(timings, {
      streamApprovalAskedMs: Number(approval?.at) - sentAt,
      streamFirstModelRequestMs: Number(firstModel) - sentAt,
      streamFirstLineMs: Number(firstLine) - sentAt,
      streamPolls: scripted()
        .requests()
        .slice(from)
        .filter((r) => r.toolCall?.name === "write_stdin").length,
    });
  });

  it("an interrupt (chat.abort) ends the command's process group on VM2", { timeout: 900_000 }, async () => {
    expect(placedOnVm2, "the first case must place the session on VM2").toBe(true);
    const tag = `abort-${randomBytes(6).toString("hex")}`;
    const runId = await send(lingering(tag), "allow-once");
    const pids = await pidsOf(vm2, tag);
    expect(await alive(await vm2(), pids)).toEqual(pids);
    // The CLI's connection neither sent the run nor is admin, so core refuses it ("unauthorized").
    await approvals().request("chat.abort", { sessionKey: SESSION_KEY, runId });
    process.stderr.write(`[codex remote-exec] aborted turn ${await settled(runId, 300_000)}\n`);
    timings.abortToGoneMs = await gone(vm2, pids, "the aborted command's processes to end on VM2");
  });

  it("no model key, gateway token or setup code is anywhere on VM2's disk", { timeout: 600_000 }, async () => {
    expect(placedOnVm2, "the first case must place the session on VM2").toBe(true);
    const setupCode = enrollmentSecrets.OPENCLAW_VSB_SETUP_CODE ?? "";
    const nodeBootstrapToken = enrollmentSecrets.OPENCLAW_VSB_BOOTSTRAP_TOKEN ?? "";
    // The code read from the enrollment program is core's setup code: base64url JSON carrying a bootstrap token.
    const decoded = JSON.parse(Buffer.from(setupCode, "base64url").toString("utf8") || "{}") as {
      bootstrapToken?: unknown;
    };
    const pairingToken = typeof decoded.bootstrapToken === "string" ? decoded.bootstrapToken : "";
    expect(pairingToken.length).toBeGreaterThan(16);
    expect(nodeBootstrapToken.length).toBeGreaterThan(16);
    // The proof file's nonce is the control: the same scan must find it where the test wrote it.
    const [control, ...found] = await scanDisk(await vm2(), [
      nonce,
      apiKey,
      token,
      setupCode,
      pairingToken,
      nodeBootstrapToken,
    ]);
    expect(control).toContain("/tmp/codex-proof");
    expect(found).toEqual([[], [], [], [], []]);
  });

  it("a node disconnect ends the attempt and its remote processes; the next attempt runs nothing while it is offline", {
    timeout: 1_200_000,
  }, async () => {
    expect(placedOnVm2, "the first case must place the session on VM2").toBe(true);
    const tag = `disconnect-${randomBytes(6).toString("hex")}`;
    const created = sandboxCreates();
    const requested = approvals().requested();
    const runId = await send(lingering(tag), "allow-once");
    const pids = await pidsOf(vm2, tag);
    const nodes = await nodePids(await vm2());
    expect(nodes.length).toBeGreaterThan(0);
    const killed = performance.now();
    await sh(await vm2(), 'kill -KILL "$@"', nodes);
    process.stderr.write(`[codex remote-exec] disconnected turn ${await settled(runId, 300_000)}\n`);
    timings.disconnectToEndMs = Math.round(performance.now() - killed);
    timings.disconnectToGoneMs = await gone(vm2, pids, "the disconnected attempt's processes to end on VM2");
    // Nothing brings the node back on VM2 (no supervisor there; core asks the provider for nothing on a turn),
    // so the next attempt meets an offline node: it is refused, asks no approval and runs nothing anywhere.
    const marker = randomBytes(6).toString("hex");
    const started = performance.now();
    const status = await settled(
      await send(`${RUN_MARKER} id -un; echo fresh-$((6*7))-${marker}`, "allow-once"),
      420_000,
    );
    timings.offlineAttemptMs = Math.round(performance.now() - started);
    timings.offlineAttemptSandboxes = sandboxCreates() - created;
    process.stderr.write(
      `[codex remote-exec] attempt with the node offline: ${status}\n${worker.gw.redact(await worker.gw.gatewayLogTail(30))}\n`,
    );
    expect(outputsWith(`fresh-42-${marker}`)).toEqual([]);
    expect(approvals().requested()).toBe(requested + 1);
    // "Runs nothing anywhere": neither the disconnected attempt nor the offline one made a sandbox to run it on.
    expect(timings.offlineAttemptSandboxes).toBe(0);
  });
});

describe(`the packed plugin on openclaw ${CODEX_GATEWAY_VERSION}`, () => {
  // The smoke the other releases between the pinned and the newest get (versions.test.ts), on this gateway, after
  // the Codex cases: its worker then starts from the base runtime image the first dispatch captured.
  it("installs, yields a ready worker, and destroy leaves no sandbox of it", { timeout: 1_200_000 }, async () => {
    Object.assign(timings, await worker.smoke());
  });
});
