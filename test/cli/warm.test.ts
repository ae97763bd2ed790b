// `openclaw vercel-sandbox images warm` on the emulator, with the real provider, SDK, bootstrap program and
// runtime archive helpers; "core" is the small stand-in below for the three environments.* methods the command
// calls (the real gateway runs it in test/gateway/cli.test.ts). The command leaves a request and has core create
// a worker; that worker's provision, and only a provision with a request, runs the base step right after its
// sandbox was created and before enrollment; the command destroys the environment on every path (Ctrl-C too);
// `images` lists the image as base; a new project's first worker starts from it without a runtime install; a
// second run builds nothing; no secret reaches the progress, the report or the image; two runs at once build one
// image between them and both succeed.
import { readdirSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { GatewayCall } from "../../src/cli/gateway.js";
import { renderImages } from "../../src/cli/images.js";
import { installedOpenClawVersion } from "../../src/cli/openclaw-version.js";
import { renderWarm, type WarmInput, warmBaseImage } from "../../src/cli/warm.js";
import { sandboxNameOf } from "../../src/provider/allocation.js";
import { VercelClient } from "../../src/vercel/index.js";
import { createRepo, runtimePreparation } from "../preparation/fixtures.js";
import { useWarmWorld } from "../preparation/warm-harness.js";
import { operationId } from "../provider/fixtures/enrollment-harness.js";

const world = useWarmWorld();
const { stateDir, store, onImage } = world;

const bases = async () => (await store().images()).filter((i) => i.kind === "base");
const secrets = () => [world.h.gateway.token, world.h.api.credentials.token];

interface Env {
  id: string;
  worker: { providerId: string; leaseId: string; state: string; error?: string };
}

/** Core's environments.create / list / destroy over the real provider on the state dir a gateway would give it. */
function coreOf() {
  const provider = world.h.provider({ stateDir });
  const envs: Env[] = [];
  const cancel = new Map<string, AbortController>();
  let runtimeAsked = 0;
  const call: GatewayCall = async (method, params, options = {}) => {
    if (method === "environments.list") return { environments: structuredClone(envs) };
    if (method === "environments.create") {
      const op = operationId();
      const leaseId = (await provider.resolveAllocation(world.h.profile, op)).leaseId;
      const env: Env = {
        id: `env-${envs.length + 1}`,
        worker: { providerId: "vercel-sandbox", leaseId, state: "provisioning" },
      };
      envs.push(env);
      const source = runtimePreparation(world.h, world.runtime, world.worker);
      const prepareNodeRuntime = async () => {
        runtimeAsked += 1;
        return source();
      };
      // As core: a destroy cancels a provision in flight; a caller that stops waiting leaves it running.
      const cancellation = new AbortController();
      cancel.set(env.id, cancellation);
      const extra = { prepareNodeRuntime, signal: cancellation.signal };
      const provision = provider.provision(
        world.h.profile,
        op,
        world.h.options(leaseId, { artifact: world.runtime }, extra),
      );
      const stopped = new Promise<never>((_, reject) => {
        options.signal?.addEventListener("abort", () => reject(options.signal?.reason), { once: true });
      });
      try {
        await Promise.race([provision, stopped]);
      } catch (error) {
        provision.catch(() => undefined);
        env.worker = { ...env.worker, state: "failed", error: String(error) };
        throw error;
      }
      env.worker.state = "ready";
      return env;
    }
    if (method === "environments.destroy") {
      const env = envs.find((e) => e.id === (params as { environmentId: string }).environmentId);
      if (!env) throw new Error("unknown environment");
      cancel.get(env.id)?.abort(new Error("destroyed"));
      await provider.destroy({ leaseId: env.worker.leaseId, profile: world.h.profile });
      env.worker.state = "destroyed";
      return env;
    }
    throw new Error(`unknown method: ${method}`);
  };
  return { call, envs, runtimeAsked: () => runtimeAsked };
}

/** The command's input as the CLI builds it, on the harness's gateway config; `lines` collects the progress. */
function warmInput(call: GatewayCall, lines: string[], extra: Partial<WarmInput> = {}): WarmInput {
  return {
    config: { cloudWorkers: { profiles: { spec: { provider: "vercel-sandbox", settings: world.h.profile } } } },
    pluginScope: "enrollment",
    stateDir,
    call,
    client: new VercelClient({ env: { ENROLL_TOKEN: world.h.api.credentials.token } }),
    progress: (line) => lines.push(line),
    signal: new AbortController().signal,
    timings: { readyTimeoutMs: 180_000, destroyTimeoutMs: 60_000, pollMs: 100 },
    openclawVersion: installedOpenClawVersion(),
    ...extra,
  };
}

/** A new project's first worker, through the provider a gateway would run on the same state dir. */
async function newProject() {
  const repo = createRepo();
  repo.commit({ ".devcontainer.json": JSON.stringify({ updateContentCommand: "echo prepared >> $HOME/prep.log" }) });
  const on = world.h.provider({ stateDir });
  const op = operationId();
  const leaseId = (await on.resolveAllocation(world.h.profile, op)).leaseId;
  const preparation = await world.core.projectOf(repo);
  try {
    await on.provision(
      world.h.profile,
      op,
      world.h.options(
        leaseId,
        { artifact: world.runtime },
        { project: preparation.project, prepareNodeRuntime: runtimePreparation(world.h, world.runtime, world.worker) },
      ),
    );
    return leaseId;
  } finally {
    preparation.close();
  }
}

describe("images warm", () => {
  it("refuses an unknown profile by name, and an unreachable gateway, before creating anything", async () => {
    const fake = coreOf();
    await expect(warmBaseImage(warmInput(fake.call, [], { profileId: "nope" }))).rejects.toThrow(
      /no cloudWorkers profile "nope" uses provider vercel-sandbox/,
    );
    const down: GatewayCall = async () => {
      throw new Error("connect ECONNREFUSED 127.0.0.1:1");
    };
    await expect(warmBaseImage(warmInput(down, []))).rejects.toMatchObject({
      message: expect.stringMatching(/^the gateway did not answer environments.list/),
      remedy: expect.stringMatching(/start it \(`openclaw gateway run`\)/),
    });
    expect(world.h.api.commands()).toHaveLength(0);
  });

  it("a worker without a project and without a request provisions as before: no runtime asked, no image", async () => {
    const fake = coreOf();
    await fake.call("environments.create", { profileId: "spec", idempotencyKey: "k" });
    expect(fake.runtimeAsked()).toBe(0);
    expect(await bases()).toHaveLength(0);
    await fake.call("environments.destroy", { environmentId: "env-1" });
  }, 240_000);

  it("interrupted (Ctrl-C) while core provisions, it destroys the environment and records no image", async () => {
    const fake = coreOf();
    const abort = new AbortController();
    const lines: string[] = [];
    const input = warmInput(fake.call, lines, { signal: abort.signal });
    input.progress = (line) => {
      lines.push(line);
      if (/^environment env-1: provisioning/.test(line)) abort.abort(new Error("interrupted"));
    };
    await expect(warmBaseImage(input)).rejects.toThrow(/interrupted/);
    expect(fake.envs.map((e) => e.worker.state)).toEqual(["destroyed"]);
    expect(await world.h.sandboxExists(fake.envs[0]!.worker.leaseId)).toBe(false);
    expect(lines.at(-1)).toMatch(/^environment env-1 destroyed/);
  }, 240_000);

  let built: Awaited<ReturnType<typeof warmBaseImage>>;
  let builtLease: string;
  const lines: string[] = [];

  it("builds the base image on core's worker before its enrollment, destroys it, and images lists it as base", async () => {
    const fake = coreOf();
    const before = (await bases()).length;
    built = await warmBaseImage(warmInput(fake.call, lines));
    builtLease = fake.envs[0]!.worker.leaseId;
    expect(built).toMatchObject({ profile: "spec", built: true, environmentId: "env-1", leaseId: builtLease });
    expect(await bases()).toHaveLength(before + 1);
    const [base] = (await bases()).filter((b) => b.snapshotId === built.snapshotId);
    expect(base).toMatchObject({ key: built.baseKey, projectKey: "", sourceLeaseId: builtLease, state: "ready" });
    // Core's runtime version is on the record: the next run's shortcut compares it with the CLI's own.
    expect(base?.openclawVersion).toBe(world.runtime.version);
    expect(fake.envs.map((e) => e.worker.state)).toEqual(["destroyed"]);
    expect(await world.h.sandboxExists(builtLease)).toBe(false);
    // The capture came before enrollment: the provider logged the base step, then enrollment began.
    const log = world.h.logs.filter((l) => l.startsWith(`vercel-sandbox ${builtLease}:`));
    const at = (re: RegExp) => log.findIndex((l) => re.test(l));
    expect(at(/base capture \d+ ms/)).toBeGreaterThan(-1);
    expect(at(/base capture \d+ ms/)).toBeLessThan(at(/: enrollment-started$/));
    expect(lines.at(-1)).toMatch(/^environment env-1 destroyed/);
    expect(renderWarm(built)).toMatch(
      new RegExp(`^Built base image ${built.snapshotId} for profile spec in \\d+\\.\\d s`),
    );
    const listed = renderImages(
      { images: await store().images(), diagnostics: await store().diagnostics() },
      Date.now(),
    );
    expect(listed.split("\n").find((l) => l.startsWith(built.snapshotId))).toMatch(/\sbase\s/);
  }, 300_000);

  it("a new project's first worker starts from it and runs no runtime install", async () => {
    const leaseId = await newProject();
    const d = (await store().diagnostics()).find((x) => x.leaseId === leaseId);
    expect(d).toMatchObject({ start: "base", baseImageId: built.snapshotId, captured: true });
    // The emulator's command log: the enrollment is the only root program on this sandbox.
    const rootPrograms = world.h.api
      .commands()
      .filter((c) => c.sandboxName === sandboxNameOf(leaseId) && c.sudo && c.command === "node");
    expect(rootPrograms).toHaveLength(1);
  }, 240_000);

  it("a second run builds nothing, creates no environment, and says so", async () => {
    const fake = coreOf();
    const commands = world.h.api.commands().length;
    const again = await warmBaseImage(warmInput(fake.call, []));
    expect(again).toMatchObject({ built: false, snapshotId: built.snapshotId });
    expect(again.environmentId).toBeUndefined();
    expect(renderWarm(again)).toMatch(/is current: nothing was built/);
    expect(fake.envs).toHaveLength(0);
    expect(world.h.api.commands()).toHaveLength(commands);
  }, 120_000);

  it("a base image of another OpenClaw version is not current: the gateway's worker decides, and builds none for this runtime", async () => {
    const fake = coreOf();
    const again = await warmBaseImage(warmInput(fake.call, [], { openclawVersion: "2026.9.6" }));
    expect(fake.envs).toHaveLength(1);
    expect(again.environmentId).toBe(fake.envs[0]?.id);
    expect(again).toMatchObject({ built: false, snapshotId: built.snapshotId });
    expect(fake.envs[0]?.worker.state).toBe("destroyed");
    expect(await bases()).toHaveLength(1);
  }, 240_000);

  it("no secret in the progress, the report or the image", async () => {
    const said = [...lines, JSON.stringify(built), renderWarm(built)].join("\n");
    for (const secret of secrets()) expect(said).not.toContain(secret);
    const found = await onImage(
      built.snapshotId,
      'for s in "$@"; do grep -rlF "$s" /home /tmp /vercel /etc /opt 2>/dev/null; done; echo done',
      secrets(),
    );
    expect(found).toBe("done\n");
  }, 240_000);

  it("two runs at once for one profile: one builds the base image, the other waits for it and reports it, no request is left", async () => {
    // The image built above no longer serves (a worker refused it), so a new one is due.
    for (const b of await bases()) await store().refuse(b.snapshotId, "spec: a new base image is due", Date.now());
    const [one, two] = [coreOf(), coreOf()];
    const runs = await Promise.all([warmBaseImage(warmInput(one.call, [])), warmBaseImage(warmInput(two.call, []))]);
    expect(runs.map((r) => r.built).sort()).toEqual([false, true]);
    expect(runs[0]?.snapshotId).toBe(runs[1]?.snapshotId);
    const fresh = (await bases()).filter((b) => b.refusedAt === undefined);
    expect(fresh.map((b) => b.snapshotId)).toEqual([runs[0]?.snapshotId]);
    expect([...one.envs, ...two.envs].map((e) => e.worker.state)).toEqual(["destroyed", "destroyed"]);
    expect(readdirSync(join(stateDir, "vercel-sandbox", "base-requests"))).toEqual([]);
  }, 300_000);
});
