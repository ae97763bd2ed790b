// Ready workers on the newest 2026.9.x (its prepared pool, `readyWorkers: 1` on the profile): after the first
// session on a project is active, core provisions a worker for the next one ahead of demand (purpose
// "reserve"); the next session's dispatch takes that worker, so no sandbox is created and no command runs on
// VM2 for it; the consumed worker is never offered again (core refills with a new lease, and a third session
// gets that one, not the second's); and turning `readyWorkers` to 0 drains the unused worker through our
// destroy. dispatch → placement active with a ready worker is measured (the table at the end).
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ScriptedModel, scriptedModelConfig, startScriptedModel } from "../../src/main-job/model.js";
import { sandboxNameOf } from "../../src/provider/allocation.js";
import { NEWEST_OPENCLAW_VERSION } from "./versions.js";
import { waitFor } from "./wait.js";
import { PROFILE, WorkerGateway } from "./worker-gateway.js";

interface PoolEnvironment {
  id: string;
  preparation?: { purpose: string; key: string };
  worker?: { leaseId?: string; state: string; error?: string; attachedSessionIds?: string[] };
}

const timings: Record<string, number> = {};

describe(`ready workers on openclaw ${NEWEST_OPENCLAW_VERSION}`, () => {
  // Its workers start from the run's base runtime image of this version (base-images.ts): the worker-turn and
  // enrollment specs prove a cold VM2 on it.
  const worker = new WorkerGateway(NEWEST_OPENCLAW_VERSION, { seed: true });
  let repo = "";
  /** Per session key: the environment its placement is on. */
  const placed = new Map<string, PoolEnvironment>();
  let firstReserve: PoolEnvironment | undefined;
  let model: ScriptedModel | undefined;

  beforeAll(async () => {
    // A model on OpenClaw's own runtime (worker-turn placement); without one 2026.9.6 picks Codex, which has none.
    model = await startScriptedModel("127.0.0.1");
    await worker.start(scriptedModelConfig(model.baseUrl), { readyWorkers: 1 });
    repo = await worker.createRepo("ready-workers spec");
  }, 900_000);

  afterAll(async () => {
    process.stderr.write(`[ready workers] ${JSON.stringify({ ...worker.timings, ...timings })}\n`);
    try {
      await worker.dispose();
    } finally {
      await model?.close();
    }
  }, 240_000);

  async function environments(): Promise<PoolEnvironment[]> {
    return (await worker.gw.callOk<{ environments: PoolEnvironment[] }>("environments.list", {})).environments;
  }

  /** A ready, unconsumed reserve other than `except`; a failed reserve fails the wait with its error. */
  function readyReserve(except: string[], timeoutMs: number): Promise<PoolEnvironment> {
    return waitFor(
      "a ready worker (purpose reserve) to be ready",
      async () => {
        const reserves = (await environments()).filter(
          (e) => e.preparation?.purpose === "reserve" && !except.includes(e.id),
        );
        const failed = reserves.find((e) => e.worker?.state === "failed");
        if (failed) throw new Error(`ready worker failed: ${failed.worker?.error}`);
        return reserves.find((e) => e.worker?.state === "ready" && (e.worker.attachedSessionIds ?? []).length === 0);
      },
      { timeoutMs, intervalMs: 1_000 },
    );
  }

  /** Creates a session on a worktree of the repo and dispatches it; returns its environment and the dispatch ms. */
  async function dispatch(key: string, timeoutMs: number) {
    await worker.gw.callOk(
      "sessions.create",
      { key, worktree: true, cwd: repo, worktreeName: key.split(":")[2] },
      120_000,
    );
    const started = performance.now();
    const result = await worker.gw.callOk<{ sessionId: string }>(
      "sessions.dispatch",
      { key, profileId: PROFILE },
      timeoutMs,
    );
    const ms = Math.round(performance.now() - started);
    // The gateway's own duration of the call (its ws log), without the CLI's start: the figure for the table.
    const served = [...(await worker.gw.gatewayLogText()).matchAll(/res ✓ sessions\.dispatch (\d+)ms/g)];
    timings[`${key.split(":")[2]}GatewayMs`] = Number(served.at(-1)?.[1] ?? Number.NaN);
    const ids = [key, result.sessionId];
    const all = await environments();
    const on = all.filter((e) => (e.worker?.attachedSessionIds ?? []).some((s) => ids.includes(s)));
    expect(on, `environments attached to ${key}: ${JSON.stringify(all)}`).toHaveLength(1);
    placed.set(key, on[0]!);
    return { environment: on[0]!, ms, startedAt: Date.now() - ms };
  }

  it("after the first session is active, core readies a worker for the next one ahead of demand", {
    timeout: 2_700_000,
  }, async () => {
    const first = await dispatch("agent:main:ready-a", 1_500_000);
    timings.coldDispatchMs = first.ms;
    expect(first.environment.preparation).toBeUndefined();
    const started = performance.now();
    firstReserve = await readyReserve([first.environment.id], 1_200_000);
    timings.reserveReadyMs = Math.round(performance.now() - started);
    expect(firstReserve.id).not.toBe(first.environment.id);
    expect(firstReserve.worker?.leaseId).toMatch(/^vsb_[0-9a-f]{24}$/);
    const names = (await worker.sandboxes()).map((b) => b.name).sort();
    expect(names).toEqual(
      [sandboxNameOf(first.environment.worker!.leaseId!), sandboxNameOf(firstReserve.worker!.leaseId!)].sort(),
    );
  });

  it("the next session's dispatch takes the ready worker: no sandbox is created and no command runs for it", {
    timeout: 900_000,
  }, async () => {
    const reserve = firstReserve!;
    const reserveBox = sandboxNameOf(reserve.worker!.leaseId!);
    const before = (await worker.sandboxes()).map((b) => b.name);
    expect(before).toContain(reserveBox);
    const commandsBefore = worker.emulator.commands().length;
    const second = await dispatch("agent:main:ready-b", 600_000);
    timings.readyDispatchMs = second.ms;
    expect(second.environment.id).toBe(reserve.id);
    expect(second.environment.worker?.leaseId).toBe(reserve.worker?.leaseId);
    expect(second.environment.id).not.toBe(placed.get("agent:main:ready-a")?.id);
    // Nothing was provisioned for it: its sandbox existed before, and no command ran there during the dispatch.
    const during = worker.emulator.commands().slice(commandsBefore);
    expect(during.filter((c) => c.sandboxName === reserveBox)).toEqual([]);
    expect((await worker.sandboxes()).map((b) => b.name)).toContain(reserveBox);
  });

  it("the consumed worker is never offered again: core refills with a new lease, and a third session gets that one", {
    timeout: 1_800_000,
  }, async () => {
    const a = placed.get("agent:main:ready-a")!;
    const b = placed.get("agent:main:ready-b")!;
    const started = performance.now();
    const refill = await readyReserve([a.id, b.id], 1_200_000);
    timings.refillReadyMs = Math.round(performance.now() - started);
    expect(refill.worker?.leaseId).not.toBe(b.worker?.leaseId);
    const third = await dispatch("agent:main:ready-c", 600_000);
    timings.secondReadyDispatchMs = third.ms;
    expect(third.environment.id).toBe(refill.id);
    // The second session's worker still holds only the second session.
    const now = (await environments()).find((e) => e.id === b.id);
    expect(now?.worker?.attachedSessionIds).toEqual(b.worker?.attachedSessionIds);
    expect(now?.worker?.attachedSessionIds).toHaveLength(1);
  });

  it("readyWorkers 0 drains the unused ready worker: core destroys it and its sandbox is gone", {
    timeout: 1_800_000,
  }, async () => {
    const used = [...placed.values()].map((e) => e.id);
    const spare = await readyReserve(used, 1_200_000);
    const spareBox = sandboxNameOf(spare.worker!.leaseId!);
    await worker.gw.patchConfig({ cloudWorkers: { profiles: { [PROFILE]: { readyWorkers: 0 } } } });
    await waitFor(
      "the unused ready worker's sandbox to be gone",
      async () => ((await worker.sandboxes()).some((s) => s.name === spareBox) ? undefined : true),
      { timeoutMs: 600_000, intervalMs: 2_000 },
    );
    const names = (await worker.sandboxes()).map((s) => s.name).sort();
    expect(names).toEqual([...placed.values()].map((e) => sandboxNameOf(e.worker!.leaseId!)).sort());
  });
});
