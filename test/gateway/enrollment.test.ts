// Issue 7, end to end with no stand-in: the packed plugin in the real openclaw@2026.9.2 gateway, bound to a
// test host with its own TLS (so setup codes pin its fingerprint), a `vercel-sandbox` profile on the emulator.
// `environments.create` runs our provision: the bootstrap on the sandbox downloads and verifies the gateway's
// real runtime artifact, installs it, the real node connects over wss:// and the environment becomes ready,
// with a device approved via bootstrap. Destroy removes the sandbox and the node's pairing. The replay after a
// gateway killed mid-enrollment runs on a second profile whose emulator starts from the run's base runtime image
// (base-images.ts): what it proves is core's replay onto the same sandbox, not the runtime install again.
import { randomUUID } from "node:crypto";
import { existsSync } from "node:fs";
import { readdir } from "node:fs/promises";
import path from "node:path";
import { Sandbox } from "@vercel/sandbox";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { LocalSandboxApi } from "../../src/emulator/index.js";
import { type SpecEmulator, seedBaseImage, startSpecEmulator } from "./base-images.js";
import { emulatorSettings, readyEnvironment, TOKEN_ENV } from "./environments.js";
import { GatewayHarness, waitFor } from "./harness.js";
import { TestHost } from "./test-host.js";

const PROVIDER_ID = "vercel-sandbox";
const PROFILE = "vsb";
/** The replay case's profile: its own emulator, seeded with the run's base runtime image. */
const REPLAY_PROFILE = "vsb-replay";

interface Environment {
  id: string;
  status?: string;
  worker?: { providerId: string; leaseId?: string; state: string; error?: string; nodeId?: string; deviceId?: string };
}
interface Device {
  deviceId: string;
  displayName?: string;
  approvedVia?: string;
  connected?: boolean;
  role?: string;
}

let harness: GatewayHarness | undefined;
let host: TestHost | undefined;
let api: LocalSandboxApi | undefined;
let world: SpecEmulator | undefined;
let replayWorld: SpecEmulator | undefined;
const notes: Record<string, unknown> = {};

/**
 * The node-runtime archive dirs core made for this harness's gateway processes: in its TMPDIR on 2026.9.2, under
 * /tmp/openclaw from 2026.9.3 on whatever TMPDIR says, where the harness's private /tmp (private-tmp.ts) keeps
 * them inside the run dir.
 */
async function runtimeArchiveDirs(h: GatewayHarness): Promise<string[]> {
  const places = [h.tmpDir, ...(h.tmpView ? [path.join(h.tmpView, "openclaw")] : [])];
  const found: string[] = [];
  for (const place of places) {
    const names = await readdir(place).catch((error: NodeJS.ErrnoException) => {
      if (error.code === "ENOENT") return [] as string[];
      throw error;
    });
    found.push(...names.filter((n) => n.startsWith("openclaw-node-runtime-")).map((n) => path.join(place, n)));
  }
  return found;
}

function gw(): GatewayHarness {
  if (!harness) throw new Error("gateway harness was not created (see beforeAll)");
  return harness;
}

function emulator(): LocalSandboxApi {
  if (!api) throw new Error("emulator was not started (see beforeAll)");
  return api;
}

function replayEmulator(): LocalSandboxApi {
  if (!replayWorld) throw new Error("the replay case's emulator was not started (see beforeAll)");
  return replayWorld.api;
}

async function sandboxes(on = emulator()) {
  return (await Sandbox.list({ ...on.credentials, fetch: on.fetch })).toArray();
}

async function devices(): Promise<{ paired: Device[]; pending: unknown[] }> {
  const result = await gw().ocOk(["devices", "list", "--json"], { timeoutMs: 60_000 });
  return JSON.parse(result.stdout) as { paired: Device[]; pending: unknown[] };
}

beforeAll(async () => {
  harness = await GatewayHarness.create();
  host = await TestHost.create();
  // Never seeded (base-images.ts): this spec proves the cold path, the runtime downloaded and installed on VM2.
  world = await startSpecEmulator();
  api = world.api;
  replayWorld = await startSpecEmulator({ seedVersion: harness.openclawVersion, token: api.credentials.token });
  await harness.installPlugin(await harness.packPlugin());
  const settings = emulatorSettings(api);
  const replaySettings = emulatorSettings(replayWorld.api);
  await harness.patchConfig({
    gateway: host.gatewayConfig(),
    cloudWorkers: {
      profiles: {
        [PROFILE]: { provider: PROVIDER_ID, settings },
        [REPLAY_PROFILE]: { provider: PROVIDER_ID, settings: replaySettings },
      },
    },
  });
  await seedBaseImage(harness.stateDir, replaySettings, replayWorld);
  await harness.startGateway({
    bind: "custom",
    tlsCertPem: host.certPem,
    env: { [TOKEN_ENV]: api.credentials.token },
    secrets: [api.credentials.token],
  });
}, 600_000);

afterAll(async () => {
  try {
    await harness?.dispose();
  } finally {
    await world?.close();
    await replayWorld?.close();
    await host?.dispose();
  }
  if (harness)
    process.stderr.write(`[enrollment test] ${harness.redact(JSON.stringify({ ...harness.timings, ...notes }))}\n`);
}, 180_000);

describe("a vercel-sandbox worker enrolls with the real gateway", () => {
  let environmentId: string | undefined;

  it("environments.create provisions a sandbox whose real node connects: ready, approved via bootstrap", {
    timeout: 900_000,
  }, async () => {
    const h = gw();
    const started = performance.now();
    const created = await h.call<Environment>(
      "environments.create",
      { profileId: PROFILE, idempotencyKey: randomUUID() },
      840_000,
    );
    h.timings.createMs = Math.round(performance.now() - started);
    if (created.code !== 0) {
      throw new Error(`${h.describeFailure("environments.create", created)}\n${h.redact(await h.gatewayLogTail(80))}`);
    }
    environmentId = created.json?.id;
    expect(environmentId).toMatch(/^worker:[0-9a-f]{32}$/);
    const ready = await readyEnvironment(h, environmentId);
    expect(ready.worker).toMatchObject({ providerId: PROVIDER_ID, state: "ready" });
    const paired = (await devices()).paired.filter((d) => d.displayName === `Cloud worker ${PROFILE}`);
    expect(paired).toHaveLength(1);
    expect(paired[0]).toMatchObject({ approvedVia: "bootstrap", role: "node" });
    notes.deviceId = paired[0]!.deviceId;
    notes.bootstrapPhases = (await h.gatewayLogText()).match(/vercel-sandbox vsb_[0-9a-f]+: bootstrap [^"\\]*/g);
    const boxes = await sandboxes();
    expect(boxes.map((b) => b.status)).toEqual(["running"]);
    // The node runs on the sandbox as its default user, from the runtime the bootstrap installed.
    const sandbox = await Sandbox.get({ ...emulator().credentials, fetch: emulator().fetch, name: boxes[0]!.name });
    const ps = await sandbox.runCommand("bash", ["-c", "ps -eo user:20,args | grep -E 'openclaw' | grep -v grep"]);
    expect(await ps.stdout()).toMatch(/^vercel-sandbox\s+openclaw-(connect|node)/m);
    expect(await h.gatewayLogText()).toMatch(/device pairing auto-approved device=/);
  });

  it("environments.destroy removes the sandbox and the node's pairing", { timeout: 420_000 }, async () => {
    const h = gw();
    expect(environmentId, "the create test must pass first").toBeDefined();
    await h.callOk("environments.destroy", { environmentId }, 240_000);
    const left = await waitFor(
      "the emulator to hold no sandbox",
      async () => {
        const boxes = await sandboxes();
        return boxes.length === 0 ? boxes : undefined;
      },
      { timeoutMs: 240_000, intervalMs: 1_000 },
    );
    expect(left).toEqual([]);
    const paired = await waitFor(
      "the environment's device to be removed",
      async () => {
        const list = (await devices()).paired;
        return list.some((d) => d.deviceId === notes.deviceId) ? undefined : list;
      },
      { timeoutMs: 180_000, intervalMs: 2_000 },
    );
    expect(paired.map((d) => d.deviceId)).not.toContain(notes.deviceId);
  });

  it("a gateway killed during enrollment replays onto the same sandbox after restart: one sandbox, one device, ready", {
    timeout: 1_200_000,
  }, async () => {
    const h = gw();
    const target = replayEmulator();
    const gatewayEnv = { env: { [TOKEN_ENV]: target.credentials.token }, secrets: [target.credentials.token] };
    const before = target.requests().length;
    const create = h.call<Environment>(
      "environments.create",
      { profileId: REPLAY_PROFILE, idempotencyKey: randomUUID() },
      600_000,
    );
    // Stop the gateway once the bootstrap is running on the new sandbox (its first command).
    await waitFor(
      "the bootstrap command on the sandbox",
      async () =>
        target
          .requests()
          .slice(before)
          .some((r) => r.method === "POST" && r.path.endsWith("/cmd")) || undefined,
      { timeoutMs: 300_000, intervalMs: 200 },
    );
    await h.killGateway();
    await create; // the CLI call ends with the gateway; core replays the operation after the restart
    await h.startGateway({ bind: "custom", tlsCertPem: host!.certPem, ...gatewayEnv });
    const ready = await waitFor(
      "the replayed environment to be ready",
      async () => {
        const list = await h.callOk<{ environments: Environment[] }>("environments.list", {});
        return list.environments.find((e) => e.worker?.providerId === PROVIDER_ID && e.worker.state === "ready");
      },
      { timeoutMs: 900_000, intervalMs: 2_000 },
    );
    notes.restart = {
      requests: target
        .requests()
        .slice(before)
        .map((r) => `${r.method} ${r.path} ${r.status}`),
      plugin: (await h.gatewayLogText()).match(/vercel-sandbox vsb_[0-9a-f]+: [a-z-]+(?! [0-9a-z])/g),
    };
    expect(ready.worker?.state).toBe("ready");
    expect((await sandboxes(target)).map((b) => b.status)).toEqual(["running"]);
    // The restarted gateway's node-runtime archive (made for the replayed enrollment, kept until it stops) is in the
    // run dir, never in the host's /tmp: 2026.9.6 puts it under /tmp/openclaw whatever TMPDIR says, and a gateway a
    // spec kills never removes it (26–32 MB each, found there from earlier runs).
    const archives = await runtimeArchiveDirs(h);
    expect(archives.length).toBeGreaterThan(0);
    for (const dir of archives) {
      expect(path.relative(h.runDir, dir)).not.toMatch(/^\.\./);
      expect(existsSync(path.join("/tmp/openclaw", path.basename(dir)))).toBe(false);
    }
    const creates = target
      .requests()
      .slice(before)
      .filter((r) => r.method === "POST" && /^\/v[23]\/sandboxes\/?$/.test(r.path));
    expect(creates.filter((r) => r.status >= 200 && r.status < 300)).toHaveLength(1);
    const paired = (await devices()).paired.filter((d) => d.displayName === `Cloud worker ${REPLAY_PROFILE}`);
    expect(paired).toHaveLength(1);
    notes.replayedDeviceId = paired[0]!.deviceId;
    await h.callOk("environments.destroy", { environmentId: ready.id }, 240_000);
    await waitFor(
      "the emulator to hold no sandbox",
      async () => ((await sandboxes(target)).length === 0 ? true : undefined),
      {
        timeoutMs: 240_000,
        intervalMs: 1_000,
      },
    );
  });

  it("no credential reached the emulator's request log, the run dir or the gateway log", {
    timeout: 60_000,
  }, async () => {
    const h = gw();
    const token = emulator().credentials.token;
    expect(JSON.stringify(emulator().requests())).not.toContain(token);
    expect(JSON.stringify(replayEmulator().requests())).not.toContain(token);
    const scan = await h.scanForSecret(token);
    expect(scan.filesRead).toBeGreaterThan(0);
    expect(scan.matches).toEqual([]);
  });
});
