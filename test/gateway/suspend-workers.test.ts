// Issue 9, reclaiming a real VM2 before sleep: the packed plugin (worker provider and `suspend` block) in the real
// gateway bound to a TLS test host, a `vercel-sandbox` profile on the emulator. With a worker enrolled and ready,
// POST /vercel-sandbox/v1/suspend releases it through the gateway (core reconciles and tears it down; the sandbox
// is deleted) before answering ready; resume reopens admission with no worker left.
import { randomUUID } from "node:crypto";
import { Sandbox } from "@vercel/sandbox";
import { Agent } from "undici";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { LocalSandboxApi } from "../../src/emulator/index.js";
import { GatewayClient } from "../../src/host/index.js";
import { type SpecEmulator, seedBaseImage, startSpecEmulator } from "./base-images.js";
import { type Environment, emulatorSettings, readyEnvironment, TOKEN_ENV } from "./environments.js";
import { GatewayHarness } from "./harness.js";
import { TestHost } from "./test-host.js";

const PROFILE = "vsb";

let harness: GatewayHarness | undefined;
let host: TestHost | undefined;
let api: LocalSandboxApi | undefined;
let world: SpecEmulator | undefined;
let client: GatewayClient | undefined;

function gw(): GatewayHarness {
  if (!harness) throw new Error("gateway harness was not created (see beforeAll)");
  return harness;
}
function gateway(): GatewayClient {
  if (!client) throw new Error("client was not created (see beforeAll)");
  return client;
}
async function sandboxes() {
  if (!api) throw new Error("emulator was not started (see beforeAll)");
  return (await Sandbox.list({ ...api.credentials, fetch: api.fetch })).toArray();
}

beforeAll(async () => {
  harness = await GatewayHarness.create();
  host = await TestHost.create();
  // The worker starts from the run's base runtime image when one is published (base-images.ts).
  world = await startSpecEmulator({ seedVersion: harness.openclawVersion });
  api = world.api;
  await harness.installPlugin(await harness.packPlugin());
  const settings = emulatorSettings(api);
  await seedBaseImage(harness.stateDir, settings, world);
  await harness.patchConfig({
    gateway: host.gatewayConfig(),
    cloudWorkers: { profiles: { [PROFILE]: { provider: "vercel-sandbox", settings } } },
    plugins: { entries: { "vercel-sandbox": { config: { suspend: { idleAfter: 0, pollInterval: "1h" } } } } },
  });
  await harness.startGateway({
    bind: "custom",
    tlsCertPem: host.certPem,
    env: { [TOKEN_ENV]: api.credentials.token },
    secrets: [api.credentials.token],
  });
  const token = ((await harness.readConfig()) as { gateway: { auth: { token: string } } }).gateway.auth.token;
  client = new GatewayClient({
    baseUrl: `https://127.0.0.1:${harness.port}`,
    token,
    dispatcher: new Agent({ connect: { ca: host.certPem } }),
    timeoutMs: 300_000,
  });
}, 600_000);

afterAll(async () => {
  try {
    await harness?.dispose();
  } finally {
    await world?.close();
    await host?.dispose();
  }
}, 180_000);

describe("suspend reclaims our VM2 workers through the gateway first", () => {
  it("a ready worker is torn down (sandbox deleted) before suspend answers ready", { timeout: 1_200_000 }, async () => {
    const h = gw();
    const created = await h.call<Environment>(
      "environments.create",
      { profileId: PROFILE, idempotencyKey: randomUUID() },
      840_000,
    );
    if (created.code !== 0) throw new Error(h.describeFailure("environments.create", created));
    const environmentId = created.json?.id;
    await readyEnvironment(h, environmentId);
    expect((await gateway().status()).workers).toEqual([expect.objectContaining({ environmentId, state: "ready" })]);
    expect((await sandboxes()).map((s) => s.status)).toEqual(["running"]);

    const started = performance.now();
    const ready = await gateway().suspend({ requestId: "sleep-with-worker", deadlineMs: 600_000 });
    process.stderr.write(
      `[suspend workers] suspend with one ready worker → ready ms: ${Math.round(performance.now() - started)}\n`,
    );
    expect(ready).toMatchObject({ status: "ready", suspensionId: expect.any(String) });
    expect(await sandboxes()).toEqual([]);
    const { suspensionId } = ready as { suspensionId: string };
    expect((await gateway().resume(suspensionId)).resumed).toBe(true);

    const status = await gateway().status();
    expect(status.suspension).toEqual({ phase: "running" });
    expect((status.workers ?? []).filter((w) => !["destroyed"].includes(w.state))).toEqual([]);
  });
});
