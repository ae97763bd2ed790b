// Issue 14, the embedded first run as the README gives it: the packed plugin in the real gateway, a profile
// `{ backend: "embedded" }` (the emulator runs inside the gateway). With the gateway as it comes (bound to
// loopback) core refuses at once, before any sandbox exists, saying what to set; with the README's gateway
// config (a non-loopback bind with TLS — here a test host's address, as `bind: "lan"` would be the machine's)
// the same profile yields a ready worker, and destroy leaves nothing.
import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { destroyedEnvironment, type Environment, readyEnvironment } from "./environments.js";
import { GatewayHarness } from "./harness.js";
import { TestHost } from "./test-host.js";

const PROFILE = "box";

let harness: GatewayHarness | undefined;
let host: TestHost | undefined;

function gw(): GatewayHarness {
  if (!harness) throw new Error("gateway harness was not created (see beforeAll)");
  return harness;
}

beforeAll(async () => {
  harness = await GatewayHarness.create();
  host = await TestHost.create();
  await harness.installPlugin(await harness.packPlugin());
  await harness.patchConfig({
    cloudWorkers: {
      profiles: {
        [PROFILE]: { provider: "vercel-sandbox", settings: { backend: "embedded" } },
        // Reported as special (listed, then "Unknown worker profile: local"); 2026.9.2 treats it like any other.
        local: { provider: "vercel-sandbox", settings: { backend: "embedded" } },
      },
    },
  });
}, 600_000);

afterAll(async () => {
  try {
    await harness?.dispose();
  } finally {
    await host?.dispose();
  }
  if (harness) process.stderr.write(`[embedded test] ${harness.redact(JSON.stringify(harness.timings))}\n`);
}, 180_000);

describe("backend: embedded, as a new user would run it", () => {
  it("with the gateway as installed, environments.create is refused at once with the config to set, before any sandbox", {
    timeout: 300_000,
  }, async () => {
    const h = gw();
    await h.startGateway();
    const refused = await h.call("environments.create", { profileId: PROFILE, idempotencyKey: randomUUID() }, 240_000);
    expect(refused.code).toBe(1);
    const listed = await h.callOk<{ environments: Environment[] }>("environments.list", {});
    const message = JSON.stringify(refused.json) + JSON.stringify(listed.environments);
    const log = (await h.gatewayLogText())
      .split("\n")
      .filter((l) => /loopback|environment|vercel-sandbox|worker/i.test(l))
      .map((l) => l.slice(0, 400))
      .join("\n");
    expect(message, log).toMatch(/only bound to loopback/);
    expect(message).toMatch(/gateway\.bind=lan/);
    // A profile named `local` gets past the profile lookup to the same refusal: nothing about the id is special.
    const local = await h.call("environments.create", { profileId: "local", idempotencyKey: randomUUID() }, 240_000);
    expect(local.code).toBe(1);
    const after = await h.callOk<{ environments: Environment[]; profiles?: Array<{ id: string }> }>(
      "environments.list",
      {},
    );
    expect(after.profiles?.map((p) => p.id)).toEqual(expect.arrayContaining([PROFILE, "local"]));
    expect(JSON.stringify(local.json)).not.toMatch(/Unknown worker profile/);
    expect(after.environments.filter((e) => /only bound to loopback/.test(e.worker?.error ?? ""))).toHaveLength(2);
    // The provider never ran: no allocation was logged, so the embedded emulator holds no sandbox.
    expect(await h.gatewayLogText()).not.toMatch(/vercel-sandbox vsb_[0-9a-f]+: allocated/);
  });

  it("with a non-loopback bind and TLS, the same profile yields a ready worker, and destroy leaves nothing", {
    timeout: 900_000,
  }, async () => {
    const h = gw();
    await h.stopGateway();
    await h.patchConfig({ gateway: host!.gatewayConfig() });
    await h.startGateway({ bind: "custom", tlsCertPem: host!.certPem });
    const created = await h.call<Environment>(
      "environments.create",
      { profileId: PROFILE, idempotencyKey: randomUUID() },
      840_000,
    );
    if (created.code !== 0) {
      throw new Error(`${h.describeFailure("environments.create", created)}\n${h.redact(await h.gatewayLogTail(60))}`);
    }
    const environmentId = created.json?.id;
    const ready = await readyEnvironment(h, environmentId);
    expect(ready.worker?.providerId).toBe("vercel-sandbox");
    expect(await h.gatewayLogText()).toMatch(/vercel-sandbox vsb_[0-9a-f]+: enrolled/);
    await h.callOk("environments.destroy", { environmentId }, 240_000);
    const gone = await destroyedEnvironment(h, environmentId);
    // Core marks the environment destroyed only after the provider's destroy proved the sandbox absent.
    expect(["destroyed", "gone"]).toContain(gone);
  });
});
