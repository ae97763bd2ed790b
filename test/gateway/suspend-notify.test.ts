// Issue 9, the resident's notifications on a real gateway for the reasons other than idle: a failed turn fences
// the resident and the next timer poll notifies the host with reason `fenced` (the idle interval is an hour, so
// nothing else could be due); and a gateway whose session deadline is within the margin notifies with reason
// `deadline` even while a turn is in flight. Every notification is verified as a host would (signature, nonce).
import { randomBytes, randomUUID } from "node:crypto";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { MemoryNonceStore, verifyNotification } from "../../src/host/index.js";
import { ScriptedModel, scriptedModelConfig } from "../suspend/scripted-model.js";
import { GatewayHarness, waitFor } from "./harness.js";

const SECRET_ENV = "VSB_NOTIFY_SECRET";
const secret = randomBytes(24).toString("hex");
const nonces = new MemoryNonceStore();
const received: Array<{ headers: http.IncomingHttpHeaders; body: string }> = [];
const host = http.createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on("data", (chunk: Buffer) => chunks.push(chunk));
  req.on("end", () => {
    received.push({ headers: req.headers, body: Buffer.concat(chunks).toString("utf8") });
    res.statusCode = 204;
    res.end();
  });
});
const model = new ScriptedModel();
let harness: GatewayHarness | undefined;
let notifyUrl = "";

function gw(): GatewayHarness {
  if (!harness) throw new Error("gateway harness was not created (see beforeAll)");
  return harness;
}

async function send(message: string) {
  const result = await gw().call("chat.send", {
    sessionKey: "agent:main:notify-spec",
    message,
    idempotencyKey: randomUUID(),
  });
  if (result.code !== 0) throw new Error(gw().describeFailure("chat.send", result as never));
}

/** The reasons of the verified notifications received from index `from` on; a forged or replayed one fails. */
async function reasonsSince(from: number): Promise<string[]> {
  const reasons: string[] = [];
  for (const { headers, body } of received.slice(from)) {
    const verified = await verifyNotification({ secret, headers: headers as never, body, nonces });
    if (!verified.ok) throw new Error(`a notification failed verification: ${verified.reason}`);
    reasons.push(verified.notification.reason);
  }
  return reasons;
}

async function configure(suspend: Record<string, unknown>) {
  const base = { idleAfter: "1h", pollInterval: "1s", renotifyAfter: "1h", notifyUrl, secretEnv: SECRET_ENV };
  await gw().patchConfig({
    plugins: { entries: { "vercel-sandbox": { config: { suspend: { ...base, ...suspend } } } } },
  });
  await gw().startGateway({ env: { [SECRET_ENV]: secret }, secrets: [secret] });
}

beforeAll(async () => {
  harness = await GatewayHarness.create();
  await new Promise<void>((resolve) => host.listen(0, "127.0.0.1", resolve));
  notifyUrl = `http://127.0.0.1:${(host.address() as AddressInfo).port}/notify`;
  const baseUrl = await model.start();
  await harness.installPlugin(await harness.packPlugin());
  await harness.patchConfig(scriptedModelConfig(baseUrl));
}, 420_000);

afterAll(async () => {
  await harness?.dispose();
  await model.close();
  await new Promise((resolve) => host.close(resolve));
}, 120_000);

describe("the resident timer notifies the host", () => {
  it("a failed turn fences, and the next poll notifies with reason fenced", { timeout: 300_000 }, async () => {
    await configure({ sessionLimit: "24h" });
    const from = received.length;
    model.failNext(10);
    await send("this one fails");
    const reasons = await waitFor(
      "a fenced notification",
      async () => {
        const all = await reasonsSince(from);
        return all.includes("fenced") ? all : undefined;
      },
      { timeoutMs: 180_000, intervalMs: 500 },
    );
    // Nothing else was due: the idle interval is an hour and the deadline a day away.
    expect(reasons).toEqual(["fenced"]);
    await gw().stopGateway();
  });

  it("a deadline within the margin notifies with reason deadline, even with a turn in flight", {
    timeout: 300_000,
  }, async () => {
    // A fresh process (the fence does not survive a restart) whose session limit equals the margin: due at once,
    // and told again every 2 s, so a notification sent while the turn is in flight can be told from one its first
    // poll may have sent before the turn began (or before the start returned). The failures queued for the last
    // case go first: a model call of the new process must not fence it.
    model.clearFailures();
    await configure({ sessionLimit: "10m", deadlineMargin: "10m", renotifyAfter: "2s" });
    await send("keep me busy");
    await waitFor("the turn to be in flight", async () => (model.held > 0 ? true : undefined), { timeoutMs: 90_000 });
    const from = received.length;
    const reasons = await waitFor(
      "a deadline notification while the turn is in flight",
      async () => {
        const all = await reasonsSince(from);
        return all.includes("deadline") ? all : undefined;
      },
      { timeoutMs: 120_000, intervalMs: 500 },
    );
    expect(reasons).toContain("deadline");
    expect(reasons).not.toContain("idle");
    expect(model.held).toBeGreaterThan(0);
    model.releaseAll();
  });
});
