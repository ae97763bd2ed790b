// Issue 9, the reference host (src/reference-host) end to end, every call over HTTP as a Vercel Function would make it:
// a real gateway (packed plugin, `suspend` block, notifyUrl pointing at the host) notifies when idle; the host
// verifies, suspends the gateway through /vercel-sandbox/v1/suspend and sleeps VM1, an emulated sandbox (the
// gateway itself runs outside it here; running it inside VM1 is the main job's issue). A message then wakes VM1:
// disk restored, a fresh process started, and the gateway's lease resumed so admission reopens; a message while
// VM1 runs wakes nothing.
import { randomBytes } from "node:crypto";
import type http from "node:http";
import type { AddressInfo } from "node:net";
import { Sandbox, Snapshot } from "@vercel/sandbox";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type LocalSandboxApi, startLocalSandboxApi } from "../../src/emulator/index.js";
import { GatewayClient } from "../../src/host/index.js";
import { createHost, serve } from "../../src/reference-host/index.js";
import { freePort, GatewayHarness, waitFor } from "./harness.js";

const VM1 = "vm1-reference-host";
const SECRET_ENV = "VSB_NOTIFY_SECRET";
const secret = randomBytes(24).toString("hex");
let harness: GatewayHarness | undefined;
let api: LocalSandboxApi | undefined;
let hostServer: http.Server | undefined;
let hostUrl = "";
let token = "";
const outcomes: unknown[] = [];
const timings: Record<string, number> = {};
let gatewayStartedAt = 0;

function gw(): GatewayHarness {
  if (!harness) throw new Error("gateway harness was not created (see beforeAll)");
  return harness;
}
function emulator() {
  if (!api) throw new Error("emulator was not started (see beforeAll)");
  return { ...api.credentials, fetch: api.fetch };
}
const vm1 = () => Sandbox.get({ ...emulator(), name: VM1 });

async function sh(script: string) {
  const done = await (await vm1()).runCommand("sh", ["-c", script]);
  return (await done.stdout()).trim();
}

beforeAll(async () => {
  harness = await GatewayHarness.create();
  token = ((await harness.readConfig()) as { gateway: { auth: { token: string } } }).gateway.auth.token;
  api = await startLocalSandboxApi({});
  await Sandbox.create({ ...emulator(), name: VM1, runtime: "node24" } as Parameters<typeof Sandbox.create>[0]);
  await sh("echo written-before-sleep > /vercel/sandbox/notes.txt");
  const host = createHost({
    gatewayUrl: `http://127.0.0.1:${harness.port}`,
    gatewayToken: token,
    notifySecret: secret,
    connection: emulator(),
    vmName: VM1,
    start: { cmd: "sh", args: ["-c", "date +%s%N > /vercel/sandbox/gateway-started; exec sleep 603"] },
    ready: async () =>
      (await (await vm1()).runCommand("test", ["-s", "/vercel/sandbox/gateway-started"])).exitCode === 0,
    onSlept: (outcome) => outcomes.push(outcome),
  });
  hostServer = await serve(host, await freePort());
  hostUrl = `http://127.0.0.1:${(hostServer.address() as AddressInfo).port}`;
  await harness.installPlugin(await harness.packPlugin());
  const suspend = {
    idleAfter: 0,
    pollInterval: "1s",
    renotifyAfter: "1h",
    notifyUrl: `${hostUrl}/notify`,
    secretEnv: SECRET_ENV,
  };
  await harness.patchConfig({ plugins: { entries: { "vercel-sandbox": { config: { suspend } } } } });
  await harness.startGateway({ env: { [SECRET_ENV]: secret }, secrets: [secret] });
  gatewayStartedAt = performance.now();
}, 420_000);

afterAll(async () => {
  await harness?.dispose();
  await new Promise((resolve) => (hostServer ? hostServer.close(resolve) : resolve(undefined)));
  await api?.close();
  process.stderr.write(`[reference host] ${JSON.stringify({ outcomes, timings })}\n`);
}, 120_000);

describe("reference host with a real gateway and an emulated VM1", () => {
  it("idle gateway → notify → suspend ready → VM1 asleep with one checkpoint", { timeout: 120_000 }, async () => {
    const outcome = await waitFor("the host's sleep", async () => outcomes[0], { timeoutMs: 90_000 });
    timings.gatewayReadyToSleptMs = Math.round(performance.now() - gatewayStartedAt);
    expect(outcome).toMatchObject({ slept: true });
    expect((await vm1()).status).toBe("stopped");
    const client = new GatewayClient({ baseUrl: `http://127.0.0.1:${gw().port}`, token });
    expect((await client.status()).suspension).toMatchObject({ phase: "ready" });
    const checkpoints = await (
      await Snapshot.list({ ...emulator(), name: VM1 } as Parameters<typeof Snapshot.list>[0])
    ).toArray();
    expect(checkpoints.filter((s) => s.status === "created")).toHaveLength(1);
  });

  it("a message wakes VM1: disk restored, gateway command started fresh, admission reopened", {
    timeout: 120_000,
  }, async () => {
    const started = performance.now();
    const response = await fetch(`${hostUrl}/message`, { method: "POST", body: "{}" });
    timings.wakeMs = Math.round(performance.now() - started);
    expect(response.status).toBe(200);
    expect(await response.json()).toMatchObject({ woke: true });
    expect(await sh("cat /vercel/sandbox/notes.txt")).toBe("written-before-sleep");
    expect(await sh("test -s /vercel/sandbox/gateway-started && echo started")).toBe("started");
    const client = new GatewayClient({ baseUrl: `http://127.0.0.1:${gw().port}`, token });
    expect((await client.status()).suspension).toEqual({ phase: "running" });
    expect(await gw().httpStatus("/readyz")).toBe(200);
  });

  it("a message while VM1 runs is answered without a wake: the gateway is not started a second time", async () => {
    const startedAt = await sh("cat /vercel/sandbox/gateway-started");
    const response = await fetch(`${hostUrl}/message`, { method: "POST", body: "{}" });
    expect(response.status).toBe(200);
    expect(await response.json()).toMatchObject({ woke: false });
    expect(await sh("cat /vercel/sandbox/gateway-started")).toBe(startedAt);
    expect((await vm1()).status).toBe("running");
  });

  it("a notification with a wrong signature is refused by the host with 401", async () => {
    const forged = await fetch(`${hostUrl}/notify`, {
      method: "POST",
      headers: { "x-vsb-timestamp": String(Date.now()), "x-vsb-nonce": "n", "x-vsb-signature": `v1=${"0".repeat(64)}` },
      body: "{}",
    });
    expect(forged.status).toBe(401);
  });
});
