// The reference host's scheduled wake (issue 23), in front of an emulated VM1 and the plugin's real routes
// (test/suspend/plugin-server.ts), with the real host library: a signed wake snapshot is kept durably before it is
// acknowledged (a store reopened on the same directory holds it; a stale or unsigned one is refused); while VM1
// sleeps, the host's one timer wakes it before the job is due by the path a message uses (no message is sent);
// a wake time that passed while VM1 was still awake is acted on as soon as VM1 is put to sleep; a job too far
// ahead for the host's timer is reported, not dropped; a stopped host wakes nothing; and at a sleep the host takes
// the gateway's wake list from its status, so a job whose push never landed is not lost.
// The specs share one VM1 and run in order.
import { randomBytes } from "node:crypto";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { Sandbox } from "@vercel/sandbox";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type LocalSandboxApi, startLocalSandboxApi } from "../../src/emulator/index.js";
import { FileWakeStore, signNotification, type VmConnection, type WakeNotification } from "../../src/host/index.js";
import { createHost, type HostConfig, type WakeEvent } from "../../src/reference-host/index.js";
import { waitFor } from "../gateway/wait.js";
import { type PluginServer, servePlugin } from "../suspend/plugin-server.js";

const VM1 = "vm1-scheduled-wake-spec";
const GATEWAY_TOKEN = randomBytes(16).toString("hex");
const NOTIFY_SECRET = randomBytes(16).toString("hex");
const START = "echo started >> /vercel/sandbox/starts; exec sleep 607";

let api: LocalSandboxApi | undefined;
let connection: VmConnection;
let plugin: PluginServer | undefined;
let stateDir = "";
let config: HostConfig;
let host: ReturnType<typeof createHost>;
const events: WakeEvent[] = [];
const slept: unknown[] = [];
const logs: string[] = [];
let revision = 1_000;

const vm1 = () => Sandbox.get({ ...connection, name: VM1 });
async function sh(script: string): Promise<string> {
  const done = await (await vm1()).runCommand("sh", ["-c", script]);
  return (await done.stdout()).trim();
}
const starts = async () => Number(await sh("cat /vercel/sandbox/starts 2>/dev/null | wc -l"));
const status = async () => (await vm1()).status;

function wakeBody(wakes: Array<[string, number]>, leadMs: number, rev = ++revision): string {
  const notification: WakeNotification = {
    version: 1,
    kind: "wake",
    instanceId: "gateway-1",
    sentAtMs: Date.now(),
    leadMs,
    snapshot: { revision: rev, wakes: wakes.map(([jobId, runAtMs]) => ({ jobId, runAtMs })) },
  };
  return JSON.stringify(notification);
}

function post(target: { fetch(request: Request): Promise<Response> }, body: string, secret = NOTIFY_SECRET) {
  return target.fetch(
    new Request("http://host.invalid/notify", { method: "POST", headers: signNotification(secret, body), body }),
  );
}

/** The idle notification a gateway instance sends; resolves once the host's sleep attempt ended. */
async function sleepVm1(instanceId: string): Promise<unknown> {
  const before = slept.length;
  const body = JSON.stringify({ version: 1, reason: "idle", instanceId, sentAtMs: Date.now(), lastActivityMs: 0 });
  expect((await post(host, body)).status).toBe(202);
  return waitFor("the host's sleep", async () => slept[before], { timeoutMs: 120_000, intervalMs: 200 });
}

const eventsFor = (jobId: string, kind: WakeEvent["kind"]) =>
  events.filter((e) => e.jobId === jobId && e.kind === kind);

beforeAll(async () => {
  api = await startLocalSandboxApi({});
  connection = { ...api.credentials, fetch: api.fetch };
  await Sandbox.create({ ...connection, name: VM1, runtime: "node24" } as Parameters<typeof Sandbox.create>[0]);
  await sh("echo started >> /vercel/sandbox/starts");
  plugin = await servePlugin({ token: GATEWAY_TOKEN, idleMs: 0 });
  stateDir = await mkdtemp(path.join(tmpdir(), "vsb-host-wake-"));
  config = {
    gatewayUrl: plugin.baseUrl,
    gatewayToken: GATEWAY_TOKEN,
    notifySecret: NOTIFY_SECRET,
    connection,
    vmName: VM1,
    start: { cmd: "sh", args: ["-c", START] },
    ready: async () =>
      (await sh('for p in /proc/[0-9]*; do tr "\\0" " " < $p/cmdline 2>/dev/null; echo; done')).includes("sleep 607"),
    onSlept: (outcome) => slept.push(outcome),
    wakeStore: new FileWakeStore(stateDir),
    wakeAheadMs: 5_000,
    onWake: (event) => events.push(event),
    log: (line) => logs.push(line),
  };
  host = createHost(config);
}, 120_000);

afterAll(async () => {
  host?.stop();
  await plugin?.close();
  await api?.close();
  if (stateDir) await rm(stateDir, { recursive: true, force: true });
}, 60_000);

describe("reference host: scheduled wake", () => {
  it("keeps a signed wake snapshot durably before acknowledging it; a stale or unsigned one is refused", async () => {
    const dueMs = Date.now() + 3_600_000;
    const body = wakeBody([["far-job", dueMs]], 60_000);
    const answer = await post(host, body);
    expect(answer.status).toBe(200);
    // Acknowledged means durable: a store opened afresh on the same directory already holds it.
    const kept = await new FileWakeStore(stateDir).read();
    expect(kept?.snapshot).toEqual(JSON.parse(body).snapshot);
    expect(eventsFor("far-job", "armed").at(-1)).toMatchObject({ atMs: dueMs - 60_000 - 5_000 });

    const stale = await post(host, wakeBody([["stale-job", Date.now() + 1_000]], 0, revision - 1));
    expect(stale.status).toBe(409);
    const forged = await post(host, wakeBody([["forged-job", Date.now() + 1_000]], 0), "not-the-secret");
    expect(forged.status).toBe(401);
    expect((await new FileWakeStore(stateDir).read())?.snapshot.wakes.map((w) => w.jobId)).toEqual(["far-job"]);
    expect(events.filter((e) => e.jobId === "stale-job" || e.jobId === "forged-job")).toEqual([]);
  });

  it("VM1 asleep: the timer wakes it before the job is due, by the wake path, without a message", {
    timeout: 240_000,
  }, async () => {
    expect(await sleepVm1("instance-a")).toMatchObject({ slept: true });
    expect(await status()).not.toBe("running");
    const dueMs = Date.now() + 40_000;
    expect((await post(host, wakeBody([["soon-job", dueMs]], 10_000))).status).toBe(200);
    const [armed] = eventsFor("soon-job", "armed");
    expect(armed).toMatchObject({ runAtMs: dueMs, atMs: dueMs - 15_000 });
    const woke = await waitFor("the scheduled wake", async () => eventsFor("soon-job", "woke")[0], {
      timeoutMs: 120_000,
      intervalMs: 200,
    });
    expect(woke).toMatchObject({ woke: true, runAtMs: dueMs });
    // Fired by the timer at its time (not before), and VM1 runs a freshly started gateway command.
    expect((woke as { firedAtMs: number }).firedAtMs).toBeGreaterThanOrEqual(dueMs - 15_000);
    expect(await status()).toBe("running");
    expect(await starts()).toBe(2);
    expect(logs.some((l) => l.includes("scheduled wake for job soon-job") && l.includes("VM1 woken"))).toBe(true);
  });

  it("a wake time that passed while VM1 was awake is acted on once VM1 is put to sleep", {
    timeout: 240_000,
  }, async () => {
    // Due in 60 s with 65 s of lead in all: the timer fires at once, finds VM1 running and leaves it.
    const dueMs = Date.now() + 60_000;
    expect((await post(host, wakeBody([["late-job", dueMs]], 60_000))).status).toBe(200);
    const idle = await waitFor("the timer's visit", async () => eventsFor("late-job", "woke")[0], {
      timeoutMs: 60_000,
      intervalMs: 200,
    });
    expect(idle).toMatchObject({ woke: false });
    // The gateway asks to sleep anyway (say, fenced): once VM1 sleeps, the job still ahead wakes it again.
    expect(await sleepVm1("instance-b")).toMatchObject({ slept: true });
    const woke = await waitFor("the wake after the sleep", async () => eventsFor("late-job", "woke")[1], {
      timeoutMs: 120_000,
      intervalMs: 200,
    });
    expect(woke).toMatchObject({ woke: true, runAtMs: dueMs });
    expect(await status()).toBe("running");
    expect(await starts()).toBe(3);
  });

  it("a job too far ahead for the host's timer, or after VM1's deadline, is reported, not dropped", async () => {
    const lines: string[] = [];
    const seen: WakeEvent[] = [];
    const deadline = Date.now() + 600_000;
    const limited = createHost({
      ...config,
      wakeStore: undefined,
      wakeMaxAheadMs: 3_600_000,
      wakeDeadlineAtMs: () => deadline,
      onWake: (event) => seen.push(event),
      log: (line) => lines.push(line),
    });
    try {
      const farMs = Date.now() + 2 * 3_600_000;
      expect((await post(limited, wakeBody([["far-job", farMs]], 60_000))).status).toBe(200);
      expect(seen).toEqual([{ kind: "unschedulable", jobId: "far-job", runAtMs: farMs, reason: "after-deadline" }]);
      const unlimited = createHost({
        ...config,
        wakeStore: undefined,
        wakeMaxAheadMs: 3_600_000,
        onWake: (event) => seen.push(event),
        log: (line) => lines.push(line),
      });
      expect((await post(unlimited, wakeBody([["far-job", farMs]], 60_000))).status).toBe(200);
      unlimited.stop();
      expect(seen[1]).toEqual({ kind: "unschedulable", jobId: "far-job", runAtMs: farMs, reason: "too-far" });
      expect(await limited.wakePlan()).toMatchObject({ kind: "unschedulable", jobId: "far-job" });
      expect(lines.filter((l) => l.includes("far-job") && l.includes("CANNOT be scheduled"))).toHaveLength(3);
    } finally {
      limited.stop();
    }
  });

  it("a stopped host's timer is cleared: a wake it had armed never fires", { timeout: 60_000 }, async () => {
    const seen: WakeEvent[] = [];
    const stopped = createHost({ ...config, wakeStore: undefined, wakeAheadMs: 0, onWake: (e) => seen.push(e) });
    expect((await post(stopped, wakeBody([["never-job", Date.now() + 1_500]], 0))).status).toBe(200);
    expect(seen.map((e) => e.kind)).toEqual(["armed"]);
    stopped.stop();
    await new Promise((resolve) => setTimeout(resolve, 3_000));
    expect(seen.map((e) => e.kind)).toEqual(["armed"]);
    expect(await status()).toBe("running");
  });

  it("at a sleep the host takes the gateway's wake list from its status: a job whose push never landed is kept", {
    timeout: 240_000,
  }, async () => {
    // The gateway knows a job the host was never told of (its push still retrying, or lost).
    const dueMs = Date.now() + 600_000;
    plugin!.setWake({ revision: Date.now(), wakes: [{ jobId: "pulled-job", runAtMs: dueMs }] }, 10_000);
    expect(await sleepVm1("instance-c")).toMatchObject({ slept: true });
    expect(await status()).not.toBe("running");
    const armed = await waitFor("the wake timer", async () => eventsFor("pulled-job", "armed")[0], {
      timeoutMs: 30_000,
      intervalMs: 100,
    });
    expect(armed).toMatchObject({ runAtMs: dueMs, atMs: dueMs - 15_000 });
    expect((await new FileWakeStore(stateDir).read())?.snapshot.wakes.map((w) => w.jobId)).toEqual(["pulled-job"]);
  });
});
