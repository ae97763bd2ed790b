// The worker cap's gate (`maxWorkers`), against a stand-in for the gateway side (the Reclaimer; the real one is
// exercised in test/gateway/worker-cap.test.ts): a placement under the cap reserves a slot, at the cap the
// least recently active idle worker is reclaimed first, a cap of busy workers refuses at once with a
// WorkerProviderError, concurrent placements never pass the cap, and a failed provision gives its slot back.
import { WorkerProviderError } from "openclaw/plugin-sdk/plugin-entry";
import { describe, expect, it } from "vitest";
import {
  type CapWorker,
  type Reclaimer,
  type ReclaimOutcome,
  WorkerCap,
  WorkerCapReachedError,
  WorkerCapReclaimError,
} from "../../src/provider/cap/index.js";

const logger = { info: () => undefined, warn: () => undefined };
const lease = (n: number) => `vsb_${n.toString(16).padStart(24, "0")}`;

function worker(leaseId: string): CapWorker {
  return { leaseId, environmentId: `worker:${leaseId}`, state: "attached", sessions: [], busy: false, lastActiveMs: 0 };
}

/** A gateway whose workers are `live` minus those reclaimed; `busy` ones are never reclaimed. */
function standIn(options: { busy?: Set<string>; listed?: string[]; delayMs?: number; fail?: string } = {}) {
  const calls: string[][] = [];
  const reclaimed: string[] = [];
  const reclaimer: Reclaimer = {
    async workers() {
      return (options.listed ?? []).map(worker);
    },
    async reclaimOne(among): Promise<ReclaimOutcome> {
      calls.push([...among]);
      if (options.delayMs) await new Promise((r) => setTimeout(r, options.delayMs));
      if (options.fail) throw new Error(options.fail);
      const idle = among.filter((l) => !options.busy?.has(l));
      const victim = idle[0];
      if (!victim) return { status: "busy", busy: among.length, candidates: among.length };
      reclaimed.push(victim);
      return { status: "reclaimed", worker: worker(victim) };
    },
  };
  return { reclaimer, calls, reclaimed };
}

async function allocated(cap: WorkerCap, leaseId: string, max: number) {
  await cap.admit(leaseId, max);
  cap.settle(leaseId, true);
}

describe("worker cap", () => {
  it("under the cap a placement reserves a slot; a replay of a counted lease takes no second one", async () => {
    const cap = new WorkerCap(() => standIn().reclaimer, logger);
    expect(await cap.admit(lease(1), 2)).toBe("reserved");
    expect(await cap.admit(lease(1), 2)).toBe("replay");
    expect(cap.snapshot().counted.map((c) => [c.leaseId, c.phase])).toEqual([[lease(1), "reserved"]]);
  });

  it("at the cap the idle worker is reclaimed through the gateway before the slot is taken", async () => {
    const gateway = standIn();
    const cap = new WorkerCap(() => gateway.reclaimer, logger);
    await allocated(cap, lease(1), 1);
    expect(await cap.admit(lease(2), 1)).toBe("reserved");
    expect(gateway.calls).toEqual([[lease(1)]]);
    expect(cap.snapshot().counted.map((c) => c.leaseId)).toEqual([lease(2)]);
  });

  it("when every counted worker is busy the placement is refused at once, retryable, and nothing is reserved", async () => {
    const gateway = standIn({ busy: new Set([lease(1)]) });
    const cap = new WorkerCap(() => gateway.reclaimer, logger);
    await allocated(cap, lease(1), 1);
    const refusal = await cap.admit(lease(2), 1).catch((e: unknown) => e);
    expect(refusal).toBeInstanceOf(WorkerCapReachedError);
    expect(refusal).toBeInstanceOf(WorkerProviderError);
    expect(refusal).toMatchObject({ retryable: true, maxWorkers: 1, busy: 1 });
    expect((refusal as Error).message).toMatch(/every worker is busy/);
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

  it("placements racing a slow reclaim wait for it and take one freed slot each, never two past the cap", async () => {
    const gateway = standIn({ delayMs: 20 });
    const cap = new WorkerCap(() => gateway.reclaimer, logger);
    for (const n of [1, 2]) await allocated(cap, lease(n), 2);
    let highest = 0;
    await Promise.all(
      [3, 4].map(async (n) => {
        await cap.admit(lease(n), 2);
        highest = Math.max(highest, cap.snapshot().counted.length);
        cap.settle(lease(n), true);
      }),
    );
    expect(highest).toBe(2);
    expect(gateway.reclaimed).toEqual([lease(1), lease(2)]);
    expect(
      cap
        .snapshot()
        .counted.map((c) => c.leaseId)
        .sort(),
    ).toEqual([lease(3), lease(4)]);
  });

  it("a failed provision gives its slot back; a destroyed lease stops counting", async () => {
    const cap = new WorkerCap(() => standIn().reclaimer, logger);
    await cap.admit(lease(1), 1);
    cap.settle(lease(1), false);
    await allocated(cap, lease(2), 1);
    cap.forget(lease(2));
    expect(await cap.admit(lease(3), 1)).toBe("reserved");
  });

  it("a reclaim the gateway could not perform refuses the placement with the reason, nothing reserved", async () => {
    const gateway = standIn({ fail: "sessions.reclaim failed (UNAVAILABLE): busy" });
    const cap = new WorkerCap(() => gateway.reclaimer, logger);
    await allocated(cap, lease(1), 1);
    const refusal = await cap.admit(lease(2), 1).catch((e: unknown) => e);
    expect(refusal).toBeInstanceOf(WorkerCapReclaimError);
    expect((refusal as Error).message).toContain("sessions.reclaim failed (UNAVAILABLE)");
    expect(cap.snapshot().counted.map((c) => c.leaseId)).toEqual([lease(1)]);
  });

  it("workers a previous gateway process placed count too (learned once from the gateway)", async () => {
    const gateway = standIn({ listed: [lease(7)], busy: new Set([lease(7)]) });
    const cap = new WorkerCap(() => gateway.reclaimer, logger);
    await expect(cap.admit(lease(1), 1)).rejects.toBeInstanceOf(WorkerCapReachedError);
    expect(gateway.calls).toEqual([[lease(7)]]);
  });

  it("placements of a profile without a cap are counted, never refused, and count against a capped one", async () => {
    const gateway = standIn({ busy: new Set([lease(0), lease(1)]) });
    const cap = new WorkerCap(() => gateway.reclaimer, logger);
    for (const n of [0, 1]) {
      cap.note(lease(n));
      cap.settle(lease(n), true);
    }
    expect(cap.snapshot()).toMatchObject({ maxWorkers: null });
    await expect(cap.admit(lease(2), 2)).rejects.toBeInstanceOf(WorkerCapReachedError);
    expect(cap.snapshot().counted).toHaveLength(2);
  });
});
