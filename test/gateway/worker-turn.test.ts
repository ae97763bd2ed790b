// A worker turn on the pinned 2026.9.2 and on the newest 2026.9.x, same spec: a session on a worktree is
// dispatched to a `vercel-sandbox` profile, the scripted model calls `exec`, and the command runs on VM2 (our
// emulated sandbox, as its account), which only VM2 can prove: the reply carries a nonce written to a file that
// exists only in that sandbox, and the account's name. A second message reuses the same VM2.
import { randomBytes } from "node:crypto";
import { Sandbox } from "@vercel/sandbox";
import { Agent, fetch as undiciFetch } from "undici";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  REPLY_PREFIX,
  RUN_PREFIX,
  type ScriptedModel,
  scriptedModelConfig,
  startScriptedModel,
} from "../../src/main-job/model.js";
import { PINNED_OPENCLAW_VERSION } from "./openclaw.js";
import { NEWEST_OPENCLAW_VERSION } from "./versions.js";
import { PROFILE, WorkerGateway } from "./worker-gateway.js";

const SESSION_KEY = "agent:main:worker-turn-spec";
const table: Record<string, Record<string, number>> = {};

afterAll(() => {
  process.stderr.write(`[worker turn] ${JSON.stringify(table)}\n`);
});

describe.each([PINNED_OPENCLAW_VERSION, NEWEST_OPENCLAW_VERSION])("a worker turn on openclaw %s", (version) => {
  // VM2 starts from the run's base runtime image of the version (base-images.ts); the enrollment spec proves the
  // cold path on both.
  const worker = new WorkerGateway(version, { seed: true });
  let model: ScriptedModel | undefined;
  let token = "";
  let repo = "";
  const timings: Record<string, number> = {};
  const nonce = randomBytes(8).toString("hex");

  beforeAll(async () => {
    model = await startScriptedModel("127.0.0.1");
    await worker.start({
      gateway: { http: { endpoints: { chatCompletions: { enabled: true } } } },
      ...scriptedModelConfig(model.baseUrl),
    });
    token = ((await worker.gw.readConfig()) as { gateway: { auth: { token: string } } }).gateway.auth.token;
    repo = await worker.createRepo("worker-turn spec");
  }, 900_000);

  afterAll(async () => {
    table[version] = { ...worker.timings, ...timings };
    try {
      await worker.dispose();
    } finally {
      await model?.close();
    }
  }, 240_000);

  async function chat(text: string): Promise<string> {
    const response = await undiciFetch(`https://${worker.host?.address}:${worker.gw.port}/v1/chat/completions`, {
      method: "POST",
      headers: {
        authorization: `Bearer ${token}`,
        "content-type": "application/json",
        "x-openclaw-session-key": SESSION_KEY,
      },
      body: JSON.stringify({ model: "openclaw", messages: [{ role: "user", content: text }] }),
      dispatcher: new Agent({ connect: { ca: worker.host?.certPem }, bodyTimeout: 900_000, headersTimeout: 900_000 }),
      signal: AbortSignal.timeout(900_000),
    });
    const body = (await response.json()) as { choices?: Array<{ message?: { content?: string } }> };
    if (!response.ok) throw new Error(`chat answered ${response.status}: ${worker.gw.redact(JSON.stringify(body))}`);
    return body.choices?.[0]?.message?.content ?? "";
  }

  it("the session dispatched to the profile runs the model's command on VM2, as its account", {
    timeout: 1_500_000,
  }, async () => {
    const gw = worker.gw;
    await gw.callOk("sessions.create", { key: SESSION_KEY, worktree: true, cwd: repo, worktreeName: "spec" }, 120_000);
    const dispatching = performance.now();
    await gw.callOk("sessions.dispatch", { key: SESSION_KEY, profileId: PROFILE }, 1_200_000);
    timings.dispatchMs = Math.round(performance.now() - dispatching);
    const boxes = await worker.sandboxes();
    expect(boxes.map((b) => b.status)).toEqual(["running"]);
    // A file only VM2 holds: its nonce is in no prompt, so only a command run there can put it in the reply.
    const box = await Sandbox.get({
      ...worker.emulator.credentials,
      fetch: worker.emulator.fetch,
      name: boxes[0]!.name,
    });
    await box.writeFiles([{ path: "/tmp/worker-turn-proof", content: Buffer.from(`${nonce}\n`) }]);
    const turn = performance.now();
    const reply = await chat(`${RUN_PREFIX}cat /tmp/worker-turn-proof; id -un`);
    timings.turnMs = Math.round(performance.now() - turn);
    expect(reply).toContain(REPLY_PREFIX);
    expect(reply).toContain(nonce);
    expect(reply).toMatch(/^vercel-sandbox$/m);
    expect(model?.toolCalls()).toBe(1);
  });

  it("a second message reuses the same VM2 and creates no sandbox", { timeout: 900_000 }, async () => {
    const before = await worker.sandboxes();
    expect(before).toHaveLength(1);
    const creates = () =>
      worker.emulator.requests().filter((r) => r.method === "POST" && /^\/v[23]\/sandboxes\/?$/.test(r.path)).length;
    const created = creates();
    const reply = await chat(`${RUN_PREFIX}cat /tmp/worker-turn-proof`);
    expect(reply).toContain(REPLY_PREFIX);
    expect(reply).toContain(nonce);
    expect(creates()).toBe(created);
    expect((await worker.sandboxes()).map((b) => b.name)).toEqual(before.map((b) => b.name));
  });
});
