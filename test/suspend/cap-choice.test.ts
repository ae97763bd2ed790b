// The gateway side of the worker cap, pure: our workers from an `environments.list` payload joined with session
// keys and per-session activity, and the choice of the worker to reclaim (the least recently active idle one).
import { describe, expect, it } from "vitest";
import { capWorkers, chooseVictim, sessionPlacement } from "../../src/suspend/cap-choice.js";
import { SessionActivity } from "../../src/suspend/sessions.js";

const lease = (n: number) => `vsb_${n.toString(16).padStart(24, "0")}`;
const env = (n: number, state: string, sessions: string[], providerId = "vercel-sandbox") => ({
  id: `worker:${n}`,
  worker: { providerId, leaseId: lease(n), state, attachedSessionIds: sessions },
});

function fixture() {
  let now = 1_000;
  const activity = new SessionActivity(() => now);
  const at = (ms: number) => {
    now = ms;
  };
  const keys = new Map([
    ["s1", { key: "agent:main:one" }],
    ["s2", { key: "agent:main:two" }],
    ["s3", { key: "agent:main:three", agentId: "main" }],
  ]);
  return { activity, at, keys };
}

describe("worker cap: which worker to reclaim", () => {
  it("the least recently active idle worker is chosen, released with sessions.reclaim by session key", () => {
    const { activity, at, keys } = fixture();
    at(100);
    activity.touch("agent:main:two");
    at(200);
    activity.touch("agent:main:one");
    const workers = capWorkers(
      { environments: [env(1, "attached", ["s1"]), env(2, "attached", ["s2"])] },
      "vercel-sandbox",
      keys,
      (k) => activity.state(k),
    );
    const choice = chooseVictim(workers, new Set([lease(1), lease(2)]));
    expect(choice.victim?.leaseId).toBe(lease(2));
    expect(choice.victim?.release).toEqual([{ method: "sessions.reclaim", params: { key: "agent:main:two" } }]);
  });

  it("a worker whose session has a run or model call in flight is busy, never chosen", () => {
    const { activity, keys } = fixture();
    activity.runStarted("agent:main:one", "run-1");
    activity.callStarted("agent:main:two", "call-1");
    const workers = capWorkers(
      { environments: [env(1, "attached", ["s1"]), env(2, "attached", ["s2"])] },
      "vercel-sandbox",
      keys,
      (k) => activity.state(k),
    );
    expect(chooseVictim(workers, new Set([lease(1), lease(2)]))).toEqual({ victim: undefined, busy: 2, candidates: 2 });
    activity.runEnded("agent:main:one", "run-1");
    const again = capWorkers({ environments: [env(1, "attached", ["s1"])] }, "vercel-sandbox", keys, (k) =>
      activity.state(k),
    );
    expect(chooseVictim(again, new Set([lease(1)])).victim?.leaseId).toBe(lease(1));
  });

  it("a worker still being placed, or held by a session we cannot name, is not chosen", () => {
    const { activity, keys } = fixture();
    const workers = capWorkers(
      { environments: [env(1, "provisioning", []), env(2, "attached", ["unknown-session"])] },
      "vercel-sandbox",
      keys,
      (k) => activity.state(k),
    );
    expect(workers.map((w) => [w.leaseId, w.busy, w.release === undefined])).toEqual([
      [lease(1), true, true],
      [lease(2), false, true],
    ]);
    expect(chooseVictim(workers, new Set([lease(1), lease(2)]))).toEqual({ victim: undefined, busy: 1, candidates: 2 });
  });

  it("a placed worker with no session is released with environments.destroy", () => {
    const { activity, keys } = fixture();
    const [worker] = capWorkers({ environments: [env(3, "ready", [])] }, "vercel-sandbox", keys, (k) =>
      activity.state(k),
    );
    expect(worker?.release).toEqual([{ method: "environments.destroy", params: { environmentId: "worker:3" } }]);
  });

  it("only our provider's workers holding a sandbox are listed, and only leases the cap named are candidates", () => {
    const { activity, keys } = fixture();
    const workers = capWorkers(
      {
        environments: [
          env(1, "attached", ["s1"], "crabbox"),
          env(2, "destroyed", []),
          env(3, "failed", []),
          env(4, "ready", []),
          env(5, "ready", []),
          { id: "odd", worker: "not an object" },
        ],
      },
      "vercel-sandbox",
      keys,
      (k) => activity.state(k),
    );
    expect(workers.map((w) => w.leaseId)).toEqual([lease(4), lease(5)]);
    expect(chooseVictim(workers, new Set([lease(5)])).victim?.leaseId).toBe(lease(5));
    expect(capWorkers("garbage", "vercel-sandbox", keys, () => undefined)).toEqual([]);
  });
});

describe("worker cap: a session's placement before its turn", () => {
  const sessions = {
    sessions: [
      {
        key: "agent:main:a",
        sessionId: "s1",
        placement: { state: "active", providerId: "vercel-sandbox", profileId: "cap1", environmentId: "worker:1" },
      },
      { key: "agent:main:b", sessionId: "s2", placement: { state: "reclaimed", environmentId: "worker:2" } },
      { key: "agent:main:c", sessionId: "s3" },
      { key: "agent:main:d", sessionId: "s4", placement: { state: "reclaimed", environmentId: "worker:gone" } },
    ],
  };
  const environments = {
    environments: [
      { id: "worker:1", profileId: "cap1", worker: { providerId: "vercel-sandbox", state: "attached" } },
      {
        id: "worker:2",
        profileId: "cap1",
        worker: { providerId: "vercel-sandbox", leaseId: lease(2), state: "destroyed" },
      },
    ],
  };

  it("reads the state, provider and profile core reports for the key", () => {
    expect(sessionPlacement(sessions, environments, "agent:main:a")).toEqual({
      state: "active",
      providerId: "vercel-sandbox",
      profileId: "cap1",
    });
  });

  it("fills in the provider and profile a reclaimed placement leaves out from its environment, with its lease", () => {
    expect(sessionPlacement(sessions, environments, "agent:main:b")).toEqual({
      state: "reclaimed",
      providerId: "vercel-sandbox",
      profileId: "cap1",
      leaseId: lease(2),
    });
    expect(sessionPlacement(sessions, environments, "agent:main:d")).toEqual({ state: "reclaimed" });
  });

  it("is undefined for a session without a placement, an unknown key and a payload of another shape", () => {
    expect(sessionPlacement(sessions, environments, "agent:main:c")).toBeUndefined();
    expect(sessionPlacement(sessions, environments, "agent:main:zz")).toBeUndefined();
    expect(sessionPlacement({ sessions: "no" }, environments, "agent:main:a")).toBeUndefined();
    expect(sessionPlacement(sessions, null, "agent:main:b")).toEqual({ state: "reclaimed" });
  });

  it("keeps no field past its bound", () => {
    const long = { sessions: [{ key: "k", placement: { state: "x".repeat(65), providerId: "p" } }] };
    expect(sessionPlacement(long, environments, "k")).toBeUndefined();
    const longProfile = { sessions: [{ key: "k", placement: { state: "reclaimed", profileId: "p".repeat(129) } }] };
    expect(sessionPlacement(longProfile, environments, "k")).toEqual({ state: "reclaimed" });
  });
});
