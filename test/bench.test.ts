// The performance record's specs. The replay round trips the bench reports are a behaviour of the provider,
// asserted here as counts against the emulator's request log; and `npm run bench` itself runs in a short mode
// so it cannot rot: its JSON has every figure, and the counts in it are the ones the provider promises.
// Nothing here asserts a time. The short mode runs every section, the real gateway's too (memory inside it,
// one suspend cycle), with small sizes.
import { execFile } from "node:child_process";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Sandbox } from "@vercel/sandbox";
import type { WorkerProfile } from "openclaw/plugin-sdk/plugin-entry";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { enrollingOptions, fakeEnrollment, operationId } from "../src/conformance/fixtures.js";
import { type LocalSandboxApi, startLocalSandboxApi } from "../src/emulator/index.js";
import { sandboxNameOf } from "../src/provider/allocation.js";
import { createVercelSandboxProvider, type VercelSandboxProvider } from "../src/provider/index.js";
import { REPO_ROOT } from "./gateway/openclaw.js";
import { ensureBuilt } from "./setup/build.js";

const CREATE = /^\/v[23]\/sandboxes$/;

describe("replay round trips", () => {
  let api: LocalSandboxApi;
  let profile: WorkerProfile;
  const providers: VercelSandboxProvider[] = [];
  const dirs: string[] = [];
  /** A provider; two made with one `stateDir` are one gateway before and after a restart. */
  const make = (stateDir?: string) => {
    const provider = createVercelSandboxProvider({
      env: { REPLAY_TOKEN: api.credentials.token },
      logger: { warn: () => undefined },
      scope: "replay",
      stateDir,
      enroll: async ({ enrollment }) => enrollment.waitForDeviceId(),
    });
    providers.push(provider);
    return provider;
  };
  const since = (from: number) => api.requests().slice(from);

  beforeAll(async () => {
    api = await startLocalSandboxApi();
    profile = {
      apiUrl: api.url,
      tokenEnv: "REPLAY_TOKEN",
      teamId: api.credentials.teamId,
      projectId: api.credentials.projectId,
    };
  });
  afterAll(async () => {
    for (const p of providers) await p.dispose();
    await api?.close();
    for (const dir of dirs) await rm(dir, { recursive: true, force: true });
  });
  const stateDir = async () => {
    const dir = await mkdtemp(join(tmpdir(), "replay-state-"));
    dirs.push(dir);
    return dir;
  };
  const routes = (from: number) =>
    since(from).map((r) => `${r.method} ${r.path.replace(/\/sessions\/[^/]+/, "/sessions/:id")} ${r.status}`);

  it("a replay of a running, enrolled lease in the process that enrolled it is one lookup and creates nothing", async () => {
    const provider = make();
    const op = operationId();
    const coldFrom = api.requests().length;
    const lease = await provider.provision(profile, op, enrollingOptions());
    // The cold path starts with the create: no lookup was added in front of it.
    const cold = since(coldFrom);
    expect(cold[0]).toMatchObject({ method: "POST", status: 200 });
    expect(cold[0]?.path).toMatch(CREATE);
    expect(cold.filter((r) => r.method === "GET")).toEqual([]);

    const replayFrom = api.requests().length;
    const options = enrollingOptions();
    const again = await provider.provision(profile, op, options);
    // With the stand-in enroller the node's check costs nothing, so the replay is the lookup alone: no create,
    // and the egress stays at its enrolled stage (no policy update).
    const replay = since(replayFrom);
    expect(replay.map((r) => `${r.method} ${r.status}`)).toEqual(["GET 200"]);
    expect(replay[0]?.path).toContain(sandboxNameOf(lease.leaseId));
    // The enroller still saw the replay's enrollment (a dead node is resumed, a live one adopted).
    expect(options.begun()).toBe(1);
    expect(again).toEqual({ ...lease, node: { deviceId: options.issued()[0]?.deviceId } });
    await provider.destroy({ leaseId: lease.leaseId, profile });
  });

  it("a replay after the enrolled sandbox stopped falls back to the full provision and still converges on one sandbox", async () => {
    const provider = make();
    const op = operationId();
    const lease = await provider.provision(profile, op, enrollingOptions());
    const name = sandboxNameOf(lease.leaseId);
    await (await Sandbox.get({ ...api.credentials, fetch: api.fetch, name })).stop();
    const from = api.requests().length;
    const options = enrollingOptions();
    const again = await provider.provision(profile, op, options);
    expect(again.leaseId).toBe(lease.leaseId);
    expect(options.begun()).toBe(1);
    expect(again.node?.deviceId).toBe(options.issued()[0]?.deviceId);
    expect(since(from).filter((r) => r.method === "POST" && CREATE.test(r.path) && r.status === 200)).toEqual([]);
    expect((await Sandbox.get({ ...api.credentials, fetch: api.fetch, name })).status).toBe("running");
    await provider.destroy({ leaseId: lease.leaseId, profile });
  });

  it("a replay in a restarted gateway (a new provider on the same state dir) is the lookup alone and creates nothing", async () => {
    const dir = await stateDir();
    const op = operationId();
    const coldFrom = api.requests().length;
    const lease = await make(dir).provision(profile, op, enrollingOptions());
    // The enrolled mark is a file write, not a request: the cold path is create and the two egress updates.
    expect(routes(coldFrom)).toEqual([
      "POST /v2/sandboxes 200",
      "POST /v2/sandboxes/sessions/:id/network-policy 200",
      "POST /v2/sandboxes/sessions/:id/network-policy 200",
    ]);
    const restarted = make(dir);
    const from = api.requests().length;
    const options = enrollingOptions();
    const again = await restarted.provision(profile, op, options);
    expect(routes(from)).toEqual([`GET /v2/sandboxes/${sandboxNameOf(lease.leaseId)} 200`]);
    expect(options.begun()).toBe(1);
    expect(again).toEqual({ ...lease, node: { deviceId: options.issued()[0]?.deviceId } });
    // Destroy buries the lease: its mark goes with it, and a third process refuses to re-create it.
    await restarted.destroy({ leaseId: lease.leaseId, profile });
    const error = await make(dir)
      .provision(profile, op, enrollingOptions())
      .catch((e: unknown) => e);
    expect((error as Error).message).toMatch(/was already destroyed; it is not re-created/);
  });

  it("a stale mark (the sandbox deleted behind the provider's back) costs the restarted replay one lookup, then it creates", async () => {
    const dir = await stateDir();
    const op = operationId();
    const lease = await make(dir).provision(profile, op, enrollingOptions());
    const name = sandboxNameOf(lease.leaseId);
    await (await Sandbox.get({ ...api.credentials, fetch: api.fetch, name })).delete();
    const from = api.requests().length;
    const again = await make(dir).provision(profile, op, enrollingOptions());
    expect(again.leaseId).toBe(lease.leaseId);
    expect(routes(from).slice(0, 2)).toEqual([`GET /v2/sandboxes/${name} 404`, "POST /v2/sandboxes 200"]);
    expect((await Sandbox.get({ ...api.credentials, fetch: api.fetch, name })).status).toBe("running");
    await make(dir).destroy({ leaseId: lease.leaseId, profile });
  });

  it("a restarted gateway whose host moved: the adopted node's egress follows it in one update, still gateway-only", async () => {
    const dir = await stateDir();
    const op = operationId();
    const lease = await make(dir).provision(profile, op, enrollingOptions());
    const moved = enrollingOptions({
      beginNodeEnrollment: async () => {
        const enrollment = fakeEnrollment();
        const url = enrollment.nodeBootstrap.url.replace("gateway.conformance.invalid", "moved.conformance.invalid");
        return { ...enrollment, nodeBootstrap: { ...enrollment.nodeBootstrap, url } };
      },
    });
    const from = api.requests().length;
    await make(dir).provision(profile, op, moved);
    expect(routes(from)).toEqual([
      `GET /v2/sandboxes/${sandboxNameOf(lease.leaseId)} 200`,
      "POST /v2/sandboxes/sessions/:id/network-policy 200",
    ]);
    const sandbox = await Sandbox.get({ ...api.credentials, fetch: api.fetch, name: sandboxNameOf(lease.leaseId) });
    // The session's policy (the sandbox's own field keeps the create-time one).
    expect(sandbox.currentSession().networkPolicy).toEqual({ allow: ["moved.conformance.invalid"] });
    // The next restart finds the mark at the new host: the lookup alone again.
    const next = api.requests().length;
    await make(dir).provision(profile, op, moved);
    expect(routes(next)).toEqual([`GET /v2/sandboxes/${sandboxNameOf(lease.leaseId)} 200`]);
    await make(dir).destroy({ leaseId: lease.leaseId, profile });
  });

  it("a replay in a new process, which enrolled nothing, still tries the create first and adopts", async () => {
    const first = make();
    const op = operationId();
    const lease = await first.provision(profile, op, enrollingOptions());
    const restarted = make();
    const from = api.requests().length;
    expect((await restarted.provision(profile, op, enrollingOptions())).leaseId).toBe(lease.leaseId);
    const replay = since(from);
    expect(replay[0]?.path).toMatch(CREATE);
    expect(replay[0]?.status).toBe(409);
    await restarted.destroy({ leaseId: lease.leaseId, profile });
  });
});

interface TripRow {
  operation: string;
  requests: number;
  creates: number;
  floor: number;
  pattern: string[];
}

describe("npm run bench, short mode", () => {
  const sizes = {
    BENCH_RUNS: "3",
    BENCH_DISTINCT: "6",
    BENCH_SAME: "4",
    BENCH_LEASES: "5",
    BENCH_SUSPEND_RUNS: "1",
    BENCH_WARM_PAIRS: "1",
    BENCH_BASE_SAMPLES: "1",
    BENCH_SNAPSHOT_RUNS: "1",
    BENCH_RUNTIME: "fixture",
  };
  let dir: string;
  let stdout: string;
  // biome-ignore lint/suspicious/noExplicitAny: the record is JSON read back from disk; each spec names its fields.
  let record: any;

  beforeAll(async () => {
    await ensureBuilt();
    dir = await mkdtemp(join(tmpdir(), "bench-short-"));
    const out = join(dir, "latest.json");
    stdout = await new Promise<string>((resolve, reject) => {
      execFile(
        process.execPath,
        ["bench/run.mjs"],
        { cwd: REPO_ROOT, env: { ...process.env, ...sizes, BENCH_OUT: out }, timeout: 420_000 },
        (error, text, stderr) => (error ? reject(new Error(`${error.message}\n${stderr}`)) : resolve(text)),
      );
    });
    record = JSON.parse(await readFile(out, "utf8"));
  }, 480_000);
  afterAll(async () => {
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  const trip = (operation: string): TripRow => {
    const row = (record.roundTrips.rows as TripRow[]).find((r) => r.operation === operation);
    if (!row) throw new Error(`no round-trip row ${operation}`);
    return row;
  };

  it("counts round trips: inspect is one lookup, a replay in the enrolling process or the restarted gateway is a lookup and the bootstrap, and no operation beats its floor", () => {
    expect(trip("inspect")).toMatchObject({ requests: 1, creates: 0, pattern: ["GET /v2/sandboxes/:id 200"] });
    expect(trip("replay, same process, stand-in enroller")).toMatchObject({ requests: 1, creates: 0 });
    // The bootstrap travels in its command: no write, on the cold path or on replay.
    expect(trip("cold provision, real bootstrap").pattern).toEqual([
      "POST /v2/sandboxes 200",
      "POST /v2/sandboxes/sessions/:id/network-policy 200",
      "POST /v2/sandboxes/sessions/:id/cmd 200",
      "POST /v2/sandboxes/sessions/:id/network-policy 200",
    ]);
    expect(trip("replay, same process, real bootstrap")).toMatchObject({
      requests: 2,
      creates: 0,
      floor: 2,
      pattern: ["GET /v2/sandboxes/:id 200", "POST /v2/sandboxes/sessions/:id/cmd 200"],
    });
    // A restarted gateway finds its enrolled mark in its state dir: no create; a process without it creates first.
    expect(trip("replay, restarted gateway, real bootstrap")).toMatchObject({
      requests: 2,
      creates: 0,
      pattern: ["GET /v2/sandboxes/:id 200", "POST /v2/sandboxes/sessions/:id/cmd 200"],
    });
    expect(trip("replay, another process without the state dir, real bootstrap").pattern[0]).toBe(
      "POST /v2/sandboxes 409",
    );
    for (const cold of ["cold provision, real bootstrap", "cold provision, stand-in enroller"]) {
      expect(trip(cold).creates).toBe(1);
      expect(trip(cold).pattern[0]).toBe("POST /v2/sandboxes 200");
      expect(trip(cold).pattern.filter((p) => p.startsWith("GET "))).toEqual([]);
    }
    expect(trip("cold provision, stand-in enroller").requests).toBe(3);
    expect(trip("renew").pattern.at(-1)).toBe("POST /v2/sandboxes/sessions/:id/extend-timeout 200");
    expect(trip("destroy").pattern.at(-1)).toBe("GET /v2/sandboxes/:id 404");
    for (const row of record.roundTrips.rows as TripRow[]) expect(row.requests).toBeGreaterThanOrEqual(row.floor);
    // The real bootstrap downloaded the artifact once: the replays adopted the node it started.
    expect(record.roundTrips.artifactDownloads).toBe(1);
  });

  it("provisions a new project cold, then another with the base image present: it starts from it and downloads no runtime", () => {
    const { cold, base } = record.baseCold;
    expect(record.baseCold).toMatchObject({ samples: 1, runtime: { kind: "fixture" } });
    expect(cold).toMatchObject({ start: "cold", baseImage: "captured", runtimeDownloads: 1, creates: 1 });
    expect(base).toMatchObject({ start: "base", baseImage: "started from", runtimeDownloads: 0, creates: 1 });
    expect(stdout).toContain("**New project: base runtime image present vs cold**");
  });

  it("provisions a project cold then warm: the warm one starts from the captured image and runs no preparation phase", () => {
    const { cold, warm, ratio } = record.warmCold;
    expect(record.warmCold).toMatchObject({ recipe: { onCreateCommand: "sleep 5" }, pairs: 1 });
    expect(cold.samplesMs).toEqual([cold.wallMs]);
    expect(warm.samplesMs).toEqual([warm.wallMs]);
    expect(cold).toMatchObject({ start: "cold", event: "initial", captured: true, phases: ["onCreateCommand"] });
    expect(cold.pattern).toContain("POST /v2/sandboxes/sessions/:id/snapshot 200");
    expect(warm).toMatchObject({ start: "warm", event: "unchanged", captured: false, phases: [], creates: 1 });
    expect(warm.pattern[0]).toBe("POST /v3/sandboxes 200");
    expect(warm.pattern.filter((p: string) => p.includes("/snapshot "))).toEqual([]);
    expect(warm.requests).toBeLessThan(cold.requests);
    // The record and the table agree: the round-trip row is the warm start's requests, the ratios its figures.
    expect(trip("warm provision (from a warm image), real bootstrap")).toMatchObject({
      requests: warm.requests,
      creates: 1,
      floor: 4,
      pattern: warm.pattern,
    });
    expect(ratio.requests).toBeCloseTo(warm.requests / cold.requests, 3);
    expect(ratio.wall).toBeCloseTo(warm.wallMs / cold.wallMs, 3);
    const percent = (n: number) => `${(n * 100).toFixed(1)} %`;
    expect(stdout).toContain(`| warm / cold `);
    expect(stdout).toContain(`Warm is ${percent(ratio.wall)} of cold in wall time`);
  });

  it("samples overhead for every operation on both sides, with the plugin's request count", () => {
    const operations = record.overhead.map((r: { operation: string }) => r.operation);
    expect(operations).toEqual([
      "cold provision (stand-in enroller)",
      "replay (same process)",
      "inspect",
      "renew",
      "destroy",
    ]);
    for (const row of record.overhead) {
      expect(row.runs).toBe(3);
      for (const side of [row.pluginOverheadMs, row.bridgeOverheadMs]) {
        expect(Object.keys(side)).toEqual(["p50", "p95"]);
        expect(Number.isFinite(side.p50)).toBe(true);
      }
      expect(Number.isFinite(row.ratio)).toBe(true);
    }
    const requests = Object.fromEntries(
      record.overhead.map((r: { operation: string; requests: number }) => [r.operation, r.requests]),
    );
    // The renew is sampled once the session has something to extend: a lookup and the extension, as the bridge's.
    expect(requests).toMatchObject({
      "cold provision (stand-in enroller)": 3,
      "replay (same process)": 1,
      inspect: 1,
      renew: 2,
    });
  });

  it("concurrent provisions make one sandbox per distinct operation and one for a shared operation, without errors", () => {
    expect(record.concurrency.distinct).toMatchObject({ provisions: 6, sandboxesCreated: 6, leases: 6, errors: 0 });
    expect(record.concurrency.sameOperation).toMatchObject({
      provisions: 4,
      sandboxesCreated: 1,
      leases: 1,
      errors: 0,
    });
  });

  it("measures memory with every lease tracked, in a process of its own and inside the real gateway, and the emulator's cost per operation", () => {
    expect(record.memory).toMatchObject({ leases: 5, tracked: 5, trackedAfterRelease: 0 });
    expect(Number.isInteger(record.memory.heapGrowthBytes)).toBe(true);
    expect(Number.isInteger(record.memory.heapRetainedAfterReleaseBytes)).toBe(true);
    // Taken in the gateway's own process (the companion checks the pid against the harness's gateway pid),
    // with that process's heap: a real gateway's heap is far above the bench child's.
    expect(record.gatewayMemory).toMatchObject({ leases: 5, tracked: 5, trackedAfterRelease: 0 });
    expect(record.gatewayMemory.where).toMatch(/inside a real openclaw 2026\.9\.2 gateway process/);
    expect(record.gatewayMemory.heapUsedBytes).toBeGreaterThan(4 * record.memory.heapUsedBytes);
    expect(Number.isInteger(record.gatewayMemory.heapGrowthBytes)).toBe(true);
    const emulator = Object.fromEntries(
      record.emulator.rows.map((r: { operation: string; requestsPerOp: number }) => [r.operation, r.requestsPerOp]),
    );
    expect(emulator).toEqual({
      create: 1,
      "run true": 1,
      stop: 1,
      "resume + run true": 3,
      delete: 1,
      "snapshot, 1 GiB sandbox": 1,
      "create from the 1 GiB snapshot": 1,
    });
  });

  it("prints the tables, names the machine and its load, takes the real-gateway figures, and says what is not built", () => {
    expect(record.machine).toMatchObject({ nproc: expect.any(Number), node: process.version });
    expect(record.machine.loadAverage1m).toEqual({ start: expect.any(Number), end: expect.any(Number) });
    for (const heading of [
      "**Round trips per operation**",
      "**Warm vs cold provision**",
      "**Plugin overhead**",
      "**Concurrency**",
      "**Memory**",
      "**Suspend**",
      "**Not built**",
    ]) {
      expect(stdout).toContain(heading);
    }
    expect(stdout).toMatch(
      /\| warm provision \(from a warm image\), real bootstrap +\| \d+ +\| 1 +\| 4 +\| create \(v3\), /,
    );
    expect(record.suspend).toMatchObject({ runs: 1, postsPerRun: [1] });
    expect(stdout).toMatch(/\| inside a real gateway \(RSS \d+ MiB\) +\| 5 +\|/);
    expect(record.notBuilt.map((f: { figure: string }) => f.figure)).toEqual([
      "memory with 50 leases tracked by core (environments.create)",
    ]);
    expect(stdout.match(/n\/a \(not built\)/g)).toHaveLength(1);
  });
});
