// The worker cap's gate (`maxWorkers`), against a stand-in for the gateway side (the Reclaimer; the real one is
// exercised in test/gateway/worker-cap.test.ts): a placement under the cap reserves a slot; at the cap the
// placement starts the reclaim of the least recently active idle worker and is refused, retryable, saying so
// (OpenClaw runs a reclaim only once no placement is in flight), and its retry takes the freed slot; a cap of
// busy workers refuses at once; concurrent placements never pass the cap; a failed provision gives its slot back.
import { WorkerProviderError } from "openclaw/plugin-sdk/plugin-entry";
import { describe, expect, it } from "vitest";
import {
  type CapWorker,
  type Reclaimer,
  type ReclaimOutcome,
  WorkerCap,
  WorkerCapReachedError,
  WorkerCapReclaimError,
  WorkerCapReclaimingError,
} from "../../src/provider/cap/index.js";

const logger = { info: () => undefined, warn: () => undefined };
const lease = (n: number) => `vsb_${n.toString(16).padStart(24, "0")}`;

function worker(leaseId: string, busy = false): CapWorker {
  return { leaseId, environmentId: `worker:${leaseId}`, state: "attached", sessions: [], busy, lastActiveMs: 0 };
}

/** A gateway listing `fleet` (lease → busy); a reclaim releases the first idle one it is offered. */
function standIn(options: { fleet?: Map<string, boolean>; delayMs?: number; fail?: string } = {}) {
  const fleet = options.fleet ?? new Map<string, boolean>();
  const calls: string[][] = [];
  const reclaimed: string[] = [];
  const reclaimer: Reclaimer = {
    async workers() {
      return [...fleet].map(([leaseId, busy]) => worker(leaseId, busy));
    },
    async reclaimOne(among): Promise<ReclaimOutcome> {
      calls.push([...among]);
      if (options.delayMs) await new Promise((r) => setTimeout(r, options.delayMs));
      if (options.fail) throw new Error(options.fail);
      const victim = among.find((l) => fleet.get(l) === false);
      if (!victim) return { status: "busy", busy: among.length, candidates: among.length };
      fleet.delete(victim);
      reclaimed.push(victim);
      return { status: "reclaimed", worker: worker(victim) };
    },
  };
  return { reclaimer, calls, reclaimed, fleet };
}

async function allocated(cap: WorkerCap, gateway: ReturnType<typeof standIn>, leaseId: string, max: number) {
  await cap.admit(leaseId, max);
  cap.settle(leaseId, true);
  gateway.fleet.set(leaseId, false);
}

describe("worker cap", () => {
  it("under the cap a placement reserves a slot; a replay of a counted lease takes no second one", async () => {
    const cap = new WorkerCap(() => standIn().reclaimer, logger);
    expect(await cap.admit(lease(1), 2)).toBe("reserved");
    expect(await cap.admit(lease(1), 2)).toBe("replay");
    expect(cap.snapshot().counted.map((c) => [c.leaseId, c.phase])).toEqual([[lease(1), "reserved"]]);
  });

  it("at the cap the placement starts the idle worker's reclaim, is refused saying so, and its retry takes the slot", async () => {
    const gateway = standIn({ delayMs: 10 });
    const cap = new WorkerCap(() => gateway.reclaimer, logger);
    await allocated(cap, gateway, lease(1), 1);
    const refusal = await cap.admit(lease(2), 1).catch((e: unknown) => e);
    expect(refusal).toBeInstanceOf(WorkerCapReclaimingError);
    expect(refusal).toBeInstanceOf(WorkerProviderError);
    expect(refusal).toMatchObject({ retryable: true });
    expect((refusal as Error).message).toMatch(/being reclaimed through the gateway.*Retry this placement/);
    // A placement arriving while that reclaim runs starts no second one.
    await expect(cap.admit(lease(3), 1)).rejects.toBeInstanceOf(WorkerCapReclaimingError);
    await cap.reclaimSettled();
    expect(gateway.calls).toEqual([[lease(1)]]);
    expect(await cap.admit(lease(2), 1)).toBe("reserved");
    expect(cap.snapshot().counted.map((c) => c.leaseId)).toEqual([lease(2)]);
  });

  it("when every counted worker is busy the placement is refused at once, retryable, and nothing is reclaimed", async () => {
    const gateway = standIn();
    const cap = new WorkerCap(() => gateway.reclaimer, logger);
    await allocated(cap, gateway, lease(1), 1);
    gateway.fleet.set(lease(1), true);
    const refusal = await cap.admit(lease(2), 1).catch((e: unknown) => e);
    expect(refusal).toBeInstanceOf(WorkerCapReachedError);
    expect(refusal).toBeInstanceOf(WorkerProviderError);
    expect(refusal).toMatchObject({ retryable: true, maxWorkers: 1, busy: 1 });
    expect((refusal as Error).message).toMatch(/every worker is busy/);
    expect(gateway.calls).toEqual([]);
    expect(cap.snapshot().counted.map((c) => c.leaseId)).toEqual([lease(1)]);
  });

  it("a worker still being placed is never a reclaim candidate: its cap refuses without asking the gateway", async () => {
    const gateway = standIn();
    const cap = new WorkerCap(() => gateway.reclaimer, logger);
    await cap.admit(lease(1), 1);
    await expect(cap.admit(lease(2), 1)).rejects.toBeInstanceOf(WorkerCapReachedError);
    expect(gateway.calls).toEqual([]);
  });

  it("10 concurrent placements under maxWorkers 3 admit 3 and refuse 7, never counting more than 3", async () => {
    const cap = new WorkerCap(() => standIn().reclaimer, logger);
    let highest = 0;
    const results = await Promise.allSettled(
      Array.from({ length: 10 }, async (_, i) => {
        await cap.admit(lease(i), 3);
        highest = Math.max(highest, cap.snapshot().counted.length);
      }),
    );
    expect(results.filter((r) => r.status === "fulfilled")).toHaveLength(3);
    expect(results.filter((r) => r.status === "rejected").map((r) => (r as PromiseRejectedResult).reason)).toEqual(
      Array.from({ length: 7 }, () => expect.any(WorkerCapReachedError)),
    );
    expect(highest).toBe(3);
  });

  it("placements racing at a full cap start one reclaim; their retries take one freed slot, never two past the cap", async () => {
    const gateway = standIn({ delayMs: 20 });
    const cap = new WorkerCap(() => gateway.reclaimer, logger);
    for (const n of [1, 2]) await allocated(cap, gateway, lease(n), 2);
    const first = await Promise.allSettled([3, 4].map((n) => cap.admit(lease(n), 2)));
    expect(first.map((r) => r.status)).toEqual(["rejected", "rejected"]);
    await cap.reclaimSettled();
    const retried = await Promise.allSettled([3, 4].map((n) => cap.admit(lease(n), 2)));
    expect(retried.filter((r) => r.status === "fulfilled")).toHaveLength(1);
    expect(cap.snapshot().counted).toHaveLength(2);
    expect(gateway.reclaimed).toEqual([lease(1)]);
  });

  it("a failed provision gives its slot back; a destroyed lease stops counting", async () => {
    const gateway = standIn();
    const cap = new WorkerCap(() => gateway.reclaimer, logger);
    await cap.admit(lease(1), 1);
    cap.settle(lease(1), false);
    await allocated(cap, gateway, lease(2), 1);
    cap.forget(lease(2));
    expect(await cap.admit(lease(3), 1)).toBe("reserved");
  });

  it("a gateway that cannot list the workers refuses the placement with the reason, nothing reserved", async () => {
    const gateway = standIn();
    const cap = new WorkerCap(() => gateway.reclaimer, logger);
    await allocated(cap, gateway, lease(1), 1);
    gateway.reclaimer.workers = async () => {
      throw new Error("GET /vercel-sandbox/v1/workers: answered 502");
    };
    const refusal = await cap.admit(lease(2), 1).catch((e: unknown) => e);
    expect(refusal).toBeInstanceOf(WorkerCapReclaimError);
    expect((refusal as Error).message).toContain("answered 502");
    expect(cap.snapshot().counted.map((c) => c.leaseId)).toEqual([lease(1)]);
  });

  it("workers a previous gateway process placed count too (learned once from the gateway)", async () => {
    const gateway = standIn({ fleet: new Map([[lease(7), true]]) });
    const cap = new WorkerCap(() => gateway.reclaimer, logger);
    await expect(cap.admit(lease(1), 1)).rejects.toBeInstanceOf(WorkerCapReachedError);
    expect(cap.snapshot().counted.map((c) => c.leaseId)).toEqual([lease(7)]);
  });

  it("placements of a profile without a cap are counted, never refused, and count against a capped one", async () => {
    const gateway = standIn();
    const cap = new WorkerCap(() => gateway.reclaimer, logger);
    for (const n of [0, 1]) {
      cap.note(lease(n));
      cap.settle(lease(n), true);
      gateway.fleet.set(lease(n), true);
    }
    expect(cap.snapshot()).toMatchObject({ maxWorkers: null });
    await expect(cap.admit(lease(2), 2)).rejects.toBeInstanceOf(WorkerCapReachedError);
    expect(cap.snapshot().counted).toHaveLength(2);
  });
});
