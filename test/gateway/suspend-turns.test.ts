// Issue 9, agent turns against the real gateway: a scripted OpenAI-compatible model on loopback holds a turn in
// flight, so suspend must answer busy (never ready) until it ends; the turn's end moves the idle clock while
// status polls do not; a turn whose model call fails fences the resident.
import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { GatewayClient } from "../../src/host/index.js";
import { FENCED_REPLY } from "../../src/suspend/plugin.js";
import { ScriptedModel, scriptedModelConfig } from "../suspend/scripted-model.js";
import { GatewayHarness, waitFor } from "./harness.js";

let harness: GatewayHarness | undefined;
let token = "";
const model = new ScriptedModel();

function gw(): GatewayHarness {
  if (!harness) throw new Error("gateway harness was not created (see beforeAll)");
  return harness;
}
const client = () => new GatewayClient({ baseUrl: `http://127.0.0.1:${gw().port}`, token, timeoutMs: 30_000 });

async function send(message: string) {
  const result = await gw().call("chat.send", {
    sessionKey: "agent:main:suspend-spec",
    message,
    idempotencyKey: randomUUID(),
  });
  if (result.code !== 0) throw new Error(gw().describeFailure("chat.send", result as never));
}

beforeAll(async () => {
  harness = await GatewayHarness.create();
  const config = (await harness.readConfig()) as { gateway: { auth: { token: string } } };
  token = config.gateway.auth.token;
  const baseUrl = await model.start();
  await harness.installPlugin(await harness.packPlugin());
  await harness.patchConfig({
    plugins: { entries: { "vercel-sandbox": { config: { suspend: { idleAfter: 0, pollInterval: "1h" } } } } },
    ...scriptedModelConfig(baseUrl),
  });
  await harness.startGateway();
}, 420_000);

afterAll(async () => {
  await harness?.dispose();
  await model.close();
}, 120_000);

describe("agent turns and the idle clock on a real gateway", () => {
  it("a turn in flight makes suspend answer busy, never ready, until it ends", { timeout: 180_000 }, async () => {
    await send("hello");
    await waitFor("the model call to be held", async () => (model.held > 0 ? true : undefined), {
      timeoutMs: 90_000,
    });
    const during = await client().status();
    process.stderr.write(
      `[suspend turns] during: turns ${during.activeTurns}, model calls ${during.activeModelCalls}\n`,
    );
    expect(during.activeTurns + during.activeModelCalls).toBeGreaterThan(0);
    expect(await client().suspendOnce("during-turn")).toMatchObject({ status: "busy", reason: "activity" });
    const lastBefore = during.lastActivityMs;

    model.releaseAll();
    const after = await waitFor(
      "the turn to end",
      async () => {
        const s = await client().status();
        return s.activeTurns === 0 && s.activeModelCalls === 0 ? s : undefined;
      },
      { timeoutMs: 90_000 },
    );
    expect(after.lastActivityMs).toBeGreaterThan(lastBefore);
    const polled = await client().status();
    expect(polled.lastActivityMs).toBe(after.lastActivityMs);

    const ready = await client().suspend({ requestId: "after-turn", deadlineMs: 60_000 });
    expect(ready.status).toBe("ready");
    const { suspensionId } = ready as { suspensionId: string };
    expect((await client().resume(suspensionId)).resumed).toBe(true);
  });

  it("a turn whose model call fails fences the resident", { timeout: 180_000 }, async () => {
    model.failNext(10);
    await send("this one fails");
    const fenced = await waitFor(
      "the fence",
      async () => {
        const s = await client().status();
        return s.fence ? s : undefined;
      },
      { timeoutMs: 120_000 },
    );
    expect(fenced.due).toBe("fenced");
  });

  it("while fenced, a new message is answered with the refusal instead of a turn", { timeout: 180_000 }, async () => {
    const completions = model.requests.length;
    await send("are you there?");
    const history = await waitFor(
      "the refusal in the transcript",
      async () => {
        const h = await gw().callOk<{ messages?: unknown[] }>("chat.history", {
          sessionKey: "agent:main:suspend-spec",
        });
        return JSON.stringify(h).includes(FENCED_REPLY) ? h : undefined;
      },
      { timeoutMs: 60_000 },
    );
    expect(JSON.stringify(history)).toContain(FENCED_REPLY);
    expect(model.requests.length).toBe(completions);
  });
});
