// Issue 3, "Real gateway": the packed plugin, installed into the real openclaw@2026.9.2 exactly as a user
// would (`npm pack` + `openclaw plugins install npm-pack:<tgz>`), configured with a `vercel-sandbox` profile
// and driven through the gateway's own RPCs against the local Vercel Sandbox emulator.
//
// Enrollment end to end (create → ready → destroy) is in enrollment.test.ts, on a gateway bound to a TLS test
// host; this file covers installation, configuration and the provider's refusals.
//
// One gateway (≈ 0.5 GB, ≈ 6–8 s to start) serves the whole file. Two emulators: `api` backs the good
// profile; `untouched` backs the invalid profiles and must never receive a single request, which proves
// that invalid settings are rejected before any Vercel API call (a shared log would also see the provider's
// periodic maintenance listing for the good profile).
import { randomUUID } from "node:crypto";
import fs from "node:fs/promises";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type LocalSandboxApi, startLocalSandboxApi } from "../../src/emulator/index.js";
import { GatewayHarness } from "./harness.js";

const PLUGIN_ID = "vercel-sandbox";
const PROVIDER_ID = "vercel-sandbox";
const TOKEN_ENV = "VERCEL_TOKEN";
const PUBLIC_ORIGIN = "https://gw.test.invalid";

/** Invalid profiles and the settings key each one must be rejected for. */
const BAD_PROFILES = {
  "bad-vcpus": { key: "vcpus", patch: { vcpus: 3 } },
  "bad-unknown-key": { key: "bogus", patch: { bogus: 1 } },
} as const;

interface ProfileSummary {
  id: string;
  providerId?: string;
  executionMode?: string;
  executionModes?: string[];
}
interface EnvironmentSummary {
  id: string;
  type: string;
  status?: string;
  worker?: { providerId: string; leaseId?: string; state: string; error?: string };
}
interface EnvironmentsList {
  environments: EnvironmentSummary[];
  profiles?: ProfileSummary[];
}
interface GatewayError {
  ok: false;
  error: { code?: string; message?: string };
}

let harness: GatewayHarness | undefined;
let api: LocalSandboxApi | undefined;
let untouched: LocalSandboxApi | undefined;

function gw(): GatewayHarness {
  if (!harness) throw new Error("gateway harness was not created (see beforeAll)");
  return harness;
}

function emulator(): LocalSandboxApi {
  if (!api) throw new Error("emulator was not started (see beforeAll)");
  return api;
}

function settingsFor(target: LocalSandboxApi, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    apiUrl: target.url,
    tokenEnv: TOKEN_ENV,
    teamId: target.credentials.teamId,
    projectId: target.credentials.projectId,
    runtime: "node24",
    vcpus: 2,
    timeout: "30m",
    ...extra,
  };
}

beforeAll(async () => {
  // Fails with a clear message when this Node cannot run openclaw@2026.9.2 (see checkNodeForOpenClaw).
  harness = await GatewayHarness.create();
  [api, untouched] = await Promise.all([startLocalSandboxApi({}), startLocalSandboxApi({})]);
  const tarball = await harness.packPlugin();
  await harness.installPlugin(tarball);
  const profiles: Record<string, unknown> = {
    vsb: { provider: PROVIDER_ID, suspendAfter: "45m", settings: settingsFor(api) },
  };
  for (const [id, bad] of Object.entries(BAD_PROFILES)) {
    profiles[id] = { provider: PROVIDER_ID, settings: settingsFor(untouched, bad.patch) };
  }
  // gateway.publicOrigin: core refuses node-enrolling providers on a loopback-only gateway before calling
  // provision. A plain non-loopback URL is enough; nothing is bound to it.
  await harness.patchConfig({ gateway: { publicOrigin: PUBLIC_ORIGIN }, cloudWorkers: { profiles } });
}, 420_000);

afterAll(async () => {
  await harness?.dispose();
  await Promise.all([api?.close(), untouched?.close()]);
  if (harness && Object.keys(harness.timings).length > 0) {
    const report = harness.redact(JSON.stringify({ timings: harness.timings }));
    process.stderr.write(`[gateway test] ${report}\n`);
  }
}, 120_000);

describe("packed plugin installed into openclaw@2026.9.2 (CLI, gateway not running)", () => {
  it("config validate passes with the vercel-sandbox profile", { timeout: 90_000 }, async () => {
    const result = await gw().oc(["config", "validate", "--json"], { timeoutMs: 60_000 });
    expect(result.code, gw().describeFailure("config validate", result)).toBe(0);
    expect(JSON.parse(result.stdout)).toMatchObject({ valid: true });
  });

  it("config validate refuses a literal Vercel token in profile settings, naming the key", {
    timeout: 90_000,
  }, async () => {
    // 2026.9.2 gives worker providers no hook at `config validate`: core checks only that settings are
    // bounded JSON and that secret-looking keys are SecretRefs. So that is all config validate can catch;
    // provider-specific keys are checked by the provider at environments.create (tests below).
    const config = await gw().readConfig();
    const cloudWorkers = config.cloudWorkers as { profiles: Record<string, { settings: Record<string, unknown> }> };
    const literal = "literal-token-value-that-must-not-be-echoed";
    const copy = structuredClone(config) as typeof config & { cloudWorkers: typeof cloudWorkers };
    copy.cloudWorkers.profiles.vsb!.settings = { ...copy.cloudWorkers.profiles.vsb!.settings, token: literal };
    const file = path.join(gw().runDir, "literal-token.json");
    await fs.writeFile(file, JSON.stringify(copy), { mode: 0o600 });
    try {
      const result = await gw().oc(["config", "validate", "--json"], {
        timeoutMs: 60_000,
        env: { OPENCLAW_CONFIG_PATH: file },
      });
      expect(result.code).not.toBe(0);
      const output = result.stdout + result.stderr;
      expect(output).toMatch(/token must use a SecretRef/);
      expect(output).not.toContain(literal);
    } finally {
      await fs.rm(file, { force: true });
    }
  });

  it("config validate accepts provider-specific mistakes (2026.9.2 has no provider hook there)", {
    timeout: 90_000,
  }, async () => {
    // The bad profiles are already in the config validated above; this pins down where rejection happens.
    const config = (await gw().readConfig()) as { cloudWorkers: { profiles: Record<string, unknown> } };
    for (const id of Object.keys(BAD_PROFILES)) expect(config.cloudWorkers.profiles[id]).toBeDefined();
    const result = await gw().oc(["config", "validate", "--json"], { timeoutMs: 60_000 });
    expect(JSON.parse(result.stdout)).toMatchObject({ valid: true });
  });

  it("plugins inspect --runtime shows the loaded worker provider", { timeout: 90_000 }, async () => {
    const result = await gw().ocOk(["plugins", "inspect", PLUGIN_ID, "--runtime", "--json"], { timeoutMs: 60_000 });
    const inspect = JSON.parse(result.stdout) as {
      plugin: { id: string; status: string; origin?: string; enabled?: boolean };
      capabilities: Array<{ kind: string; ids: string[] }>;
      diagnostics?: unknown[];
      install?: { source?: string };
    };
    expect(inspect.plugin).toMatchObject({ id: PLUGIN_ID, status: "loaded", enabled: true });
    expect(inspect.capabilities).toContainEqual({ kind: "worker-provider", ids: [PROVIDER_ID] });
    expect(inspect.install?.source).toBe("npm");
    expect(inspect.diagnostics ?? []).toEqual([]);
  });
});

describe("running gateway", () => {
  beforeAll(async () => {
    const h = gw();
    const target = emulator();
    // The Vercel token exists only in the gateway process's environment, under the profile's tokenEnv.
    await h.startGateway({
      env: { [TOKEN_ENV]: target.credentials.token },
      secrets: [target.credentials.token, untouched?.credentials.token ?? ""],
    });
  }, 180_000);

  it("environments.list advertises the profile with both execution modes", { timeout: 90_000 }, async () => {
    const list = await gw().callOk<EnvironmentsList>("environments.list", {});
    const profile = list.profiles?.find((p) => p.id === "vsb");
    expect(profile).toMatchObject({
      id: "vsb",
      providerId: PROVIDER_ID,
      executionMode: "worker-turn",
      executionModes: ["worker-turn", "remote-exec"],
    });
  });

  for (const [profileId, bad] of Object.entries(BAD_PROFILES)) {
    it(`environments.create rejects ${profileId} naming \`${bad.key}\`, before any Vercel request`, {
      timeout: 300_000,
    }, async () => {
      const h = gw();
      const started = performance.now();
      const result = await h.call<GatewayError>(
        "environments.create",
        { profileId, idempotencyKey: randomUUID() },
        240_000,
      );
      h.timings[`create:${profileId}`] = Math.round(performance.now() - started);
      expect(result.code, h.describeFailure("environments.create", result)).toBe(1);
      expect(result.json?.error.code).toBe("INVALID_REQUEST");
      expect(result.json?.error.message).toContain(`\`${bad.key}\``);
      expect(untouched?.requests()).toEqual([]);
    });
  }

  it("the Vercel token never reached the config, the logs or any state file", { timeout: 60_000 }, async () => {
    const h = gw();
    const token = emulator().credentials.token;
    const scan = await h.scanForSecret(token);
    expect(scan.matches).toEqual([]);
    // The run dir holds at least the config, the logs and the state: a scan that read nothing proves nothing,
    // and the same scan does find a value known to be in the config (the emulator's team id).
    expect(scan.filesRead).toBeGreaterThan(0);
    expect((await h.scanForSecret(emulator().credentials.teamId)).matches).toContain(
      path.relative(h.runDir, h.configPath),
    );
  });
});
