// The worker cap's gate (`maxWorkers`), against a stand-in for the gateway side (the Reclaimer; the real one is
// exercised in test/gateway/worker-cap.test.ts): a placement under the cap reserves a slot; at the cap the
// placement starts the reclaim of the least recently active idle worker and is refused, retryable, saying so
// (OpenClaw runs a reclaim only once no placement is in flight), and its retry takes the freed slot; a cap of
// busy workers refuses at once; concurrent placements never pass the cap; a failed provision gives its slot back.
import { WorkerProviderError } from "openclaw/plugin-sdk/plugin-entry";
import { describe, expect, it } from "vitest";
import {
  type CapWorker,
  makeRoomForTurn,
  type Reclaimer,
  type ReclaimOutcome,
  type SessionPlacement,
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

/**
 * A gateway listing `fleet` (lease → busy) and the sessions' `placements`; a reclaim releases the first idle one
 * it is offered.
 */
function standIn(options: { fleet?: Map<string, boolean>; delayMs?: number; fail?: string } = {}) {
  const fleet = options.fleet ?? new Map<string, boolean>();
  const placements = new Map<string, SessionPlacement>();
  const asked: string[] = [];
  const calls: string[][] = [];
  const reclaimed: string[] = [];
  const reclaimer: Reclaimer = {
    async workers() {
      return [...fleet].map(([leaseId, busy]) => worker(leaseId, busy));
    },
    async placementOf(sessionKey) {
      asked.push(sessionKey);
      return placements.get(sessionKey);
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
  return { reclaimer, calls, reclaimed, fleet, placements, asked };
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

describe("room for a turn before it is placed (the before_dispatch hook)", () => {
  /** A clock the injected sleep moves, so waits take no real time; `onSleep` runs at each poll. */
  function clock(onSleep: (polls: number) => void = () => undefined) {
    let now = 0;
    let polls = 0;
    return {
      now: () => now,
      sleep: async (ms: number) => {
        now += ms;
        polls += 1;
        onSleep(polls);
      },
      polls: () => polls,
    };
  }

  it("under the cap there is room at once: nothing is listed or reclaimed", async () => {
    const gateway = standIn();
    const cap = new WorkerCap(() => gateway.reclaimer, logger);
    await allocated(cap, gateway, lease(1), 2);
    expect(await cap.makeRoomAhead(2, 60_000)).toBe("room");
    expect(gateway.calls).toEqual([]);
  });

  it("at the cap it reclaims the idle worker and resolves once the slot is free: the placement after it is admitted, not refused", async () => {
    const gateway = standIn({ delayMs: 20 });
    const cap = new WorkerCap(() => gateway.reclaimer, logger);
    await allocated(cap, gateway, lease(1), 1);
    expect(await cap.makeRoomAhead(1, 60_000)).toBe("reclaimed");
    expect(gateway.reclaimed).toEqual([lease(1)]);
    expect(cap.snapshot().counted).toEqual([]);
    expect(await cap.admit(lease(2), 1)).toBe("reserved");
  });

  it("a reclaim a refused placement already started is awaited, never doubled", async () => {
    const gateway = standIn({ delayMs: 30 });
    const cap = new WorkerCap(() => gateway.reclaimer, logger);
    await allocated(cap, gateway, lease(1), 1);
    await expect(cap.admit(lease(2), 1)).rejects.toBeInstanceOf(WorkerCapReclaimingError);
    expect(await cap.makeRoomAhead(1, 60_000)).toBe("reclaimed");
    expect(gateway.calls).toEqual([[lease(1)]]);
  });

  it("while every worker is busy it waits, and reclaims the first that becomes idle", async () => {
    const gateway = standIn();
    const time = clock((polls) => {
      if (polls === 3) gateway.fleet.set(lease(1), false);
    });
    const cap = new WorkerCap(() => gateway.reclaimer, logger, time.now);
    await allocated(cap, gateway, lease(1), 1);
    gateway.fleet.set(lease(1), true);
    expect(await cap.makeRoomAhead(1, 60_000, { pollMs: 1_000, sleep: time.sleep })).toBe("reclaimed");
    expect(time.polls()).toBe(3);
    expect(gateway.reclaimed).toEqual([lease(1)]);
  });

  it("busy past the wait it gives up without reclaiming: the placement then refuses, naming the cap", async () => {
    const gateway = standIn();
    const time = clock();
    const cap = new WorkerCap(() => gateway.reclaimer, logger, time.now);
    await allocated(cap, gateway, lease(1), 1);
    gateway.fleet.set(lease(1), true);
    expect(await cap.makeRoomAhead(1, 10_000, { pollMs: 1_000, sleep: time.sleep })).toBe("busy");
    expect(time.now()).toBeLessThanOrEqual(10_000);
    expect(time.polls()).toBe(10);
    expect(gateway.calls).toEqual([]);
    const refusal = await cap.admit(lease(2), 1).catch((e: unknown) => e);
    expect(refusal).toBeInstanceOf(WorkerCapReachedError);
    expect((refusal as Error).message).toMatch(/maxWorkers 1 reached and every worker is busy/);
  });

  it("a gateway that cannot list its workers ends the wait at once (the placement applies the cap)", async () => {
    const gateway = standIn();
    const cap = new WorkerCap(() => gateway.reclaimer, logger);
    await allocated(cap, gateway, lease(1), 1);
    gateway.reclaimer.workers = async () => {
      throw new Error("answered 502");
    };
    expect(await cap.makeRoomAhead(1, 60_000)).toBe("failed");
  });

  describe("makeRoomForTurn", () => {
    const KEY = "agent:main:b";
    function setup() {
      const gateway = standIn({ delayMs: 5 });
      const cap = new WorkerCap(() => gateway.reclaimer, logger);
      const options = {
        providerId: "vercel-sandbox",
        cap,
        reclaimer: () => gateway.reclaimer,
        capOf: (profileId: string) => (profileId === "capped" ? { maxWorkers: 1, waitMs: 5_000 } : undefined),
        logger,
      };
      return { gateway, cap, options };
    }

    it("a session whose worker of ours was reclaimed, on a capped profile, gets room: the idle worker is reclaimed first", async () => {
      const { gateway, cap, options } = setup();
      await allocated(cap, gateway, lease(1), 1);
      gateway.placements.set(KEY, { state: "reclaimed", providerId: "vercel-sandbox", profileId: "capped" });
      expect(await makeRoomForTurn(KEY, options)).toBe("reclaimed");
      expect(gateway.asked).toEqual([KEY]);
      expect(gateway.reclaimed).toEqual([lease(1)]);
    });

    it("a reclaimed placement core names no profile for gets the cap its lease was placed under", async () => {
      const { gateway, cap, options } = setup();
      await allocated(cap, gateway, lease(1), 1);
      cap.remember(lease(9), { maxWorkers: 1, waitMs: 5_000 });
      gateway.placements.set(KEY, { state: "reclaimed", providerId: "vercel-sandbox", leaseId: lease(9) });
      expect(await makeRoomForTurn(KEY, options)).toBe("reclaimed");
      expect(gateway.reclaimed).toEqual([lease(1)]);
      // A lease this process never placed under a cap, with no profile named: left to the placement.
      gateway.placements.set("other", { state: "reclaimed", providerId: "vercel-sandbox", leaseId: lease(8) });
      expect(await makeRoomForTurn("other", options)).toBe("skipped");
    });

    it("anything else is left to the placement: no placement, a live one, another provider's, an uncapped profile, no key", async () => {
      const { gateway, cap, options } = setup();
      await allocated(cap, gateway, lease(1), 1);
      const cases: Array<[string, SessionPlacement | undefined]> = [
        ["none", undefined],
        ["active", { state: "active", providerId: "vercel-sandbox", profileId: "capped" }],
        ["other", { state: "reclaimed", providerId: "crabbox", profileId: "capped" }],
        ["uncapped", { state: "reclaimed", providerId: "vercel-sandbox", profileId: "open" }],
        ["unnamed", { state: "reclaimed", providerId: "vercel-sandbox" }],
      ];
      for (const [name, placement] of cases) {
        if (placement) gateway.placements.set(name, placement);
        expect(await makeRoomForTurn(name, options), name).toBe("skipped");
      }
      expect(await makeRoomForTurn(undefined, options)).toBe("skipped");
      expect(gateway.asked).toEqual(cases.map(([name]) => name));
      expect(gateway.calls).toEqual([]);
    });

    it("a placement that cannot be read is skipped with a warning naming why", async () => {
      const { gateway, options } = setup();
      const warnings: string[] = [];
      gateway.reclaimer.placementOf = async () => {
        throw new Error("GET /vercel-sandbox/v1/workers/placement: answered 502");
      };
      expect(await makeRoomForTurn(KEY, { ...options, logger: { warn: (m: string) => warnings.push(m) } })).toBe(
        "skipped",
      );
      expect(warnings).toEqual([expect.stringContaining("answered 502")]);
    });
  });
});
