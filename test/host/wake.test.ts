// Scheduled wake, the host library: a signed wake notification is verified (and a sleep one is not taken for
// it), the latest snapshot is kept durably (a new store on the same directory reads it back) and replaced only
// by a higher revision (a stale or repeated one is refused), and the next wake is planned or reported as
// unschedulable, never dropped.
import { mkdtemp, readdir, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import {
  FileWakeStore,
  MemoryNonceStore,
  notificationKind,
  planWake,
  signNotification,
  verifyNotification,
  verifyWakeNotification,
  type WakeNotification,
  WakeSchedule,
  wakeKey,
} from "../../src/host/index.js";

const SECRET = "wake-spec-secret";
const dirs: string[] = [];
afterEach(async () => {
  for (const dir of dirs.splice(0)) await rm(dir, { recursive: true, force: true });
});

function wake(revision: number, wakes: Array<[string, number]>, leadMs = 60_000): WakeNotification {
  return {
    version: 1,
    kind: "wake",
    instanceId: "i-1",
    sentAtMs: 1,
    leadMs,
    snapshot: { revision, wakes: wakes.map(([jobId, runAtMs]) => ({ jobId, runAtMs })) },
  };
}

describe("wake notifications", () => {
  it("a signed wake notification verifies as one; a sleep notification never passes as a wake", async () => {
    const body = JSON.stringify(wake(7, [["a", 100]]));
    const nowMs = Date.now();
    const ok = await verifyWakeNotification({
      secret: SECRET,
      headers: signNotification(SECRET, body, nowMs),
      body,
      nonces: new MemoryNonceStore(),
      nowMs,
    });
    expect(ok).toMatchObject({ ok: true, notification: { snapshot: { revision: 7 } } });
    expect(notificationKind(body)).toBe("wake");
    const sleep = JSON.stringify({ version: 1, reason: "idle", instanceId: "i", sentAtMs: 1, lastActivityMs: 1 });
    const asWake = await verifyWakeNotification({
      secret: SECRET,
      headers: signNotification(SECRET, sleep, nowMs),
      body: sleep,
      nonces: new MemoryNonceStore(),
      nowMs,
    });
    expect(asWake).toEqual({ ok: false, reason: "bad-body" });
    expect(notificationKind(sleep)).toBe("sleep");
    const asSleep = await verifyNotification({
      secret: SECRET,
      headers: signNotification(SECRET, body, nowMs),
      body,
      nonces: new MemoryNonceStore(),
      nowMs,
    });
    expect(asSleep).toEqual({ ok: false, reason: "bad-body" });
  });
});

describe("wake schedule", () => {
  it("keeps the latest snapshot durably and refuses a stale or repeated revision", async () => {
    const dir = await mkdtemp(path.join(tmpdir(), "vsb-wake-"));
    dirs.push(dir);
    const schedule = new WakeSchedule(new FileWakeStore(dir));
    expect(await schedule.accept(wake(10, [["a", 200_000]]))).toBe("accepted");
    expect(await schedule.accept(wake(9, [["old", 1]]))).toBe("stale");
    expect(await schedule.accept(wake(10, [["same", 1]]))).toBe("stale");
    expect(await schedule.accept(wake(11, [["b", 300_000]]))).toBe("accepted");
    // A host restarted on the same directory knows the accepted snapshot.
    const again = new WakeSchedule(new FileWakeStore(dir));
    expect((await again.latest())?.snapshot).toEqual({ revision: 11, wakes: [{ jobId: "b", runAtMs: 300_000 }] });
    expect(await again.nextWakeAt()).toBe(240_000);
    expect(await again.accept(wake(10, [["stale", 1]]))).toBe("stale");
    expect((await readdir(dir)).filter((f) => f.endsWith(".tmp"))).toEqual([]);
  });

  it("plans the wake before the soonest job, or reports why it cannot", () => {
    const kept = (wakes: Array<[string, number]>) => ({
      instanceId: "i",
      leadMs: 30_000,
      acceptedAtMs: 0,
      snapshot: { revision: 1, wakes: wakes.map(([jobId, runAtMs]) => ({ jobId, runAtMs })) },
    });
    expect(planWake(undefined, 0)).toEqual({ kind: "none" });
    expect(planWake(kept([]), 0)).toEqual({ kind: "none" });
    expect(planWake(kept([["a", 100_000]]), 0)).toEqual({ kind: "wake", atMs: 70_000, jobId: "a", runAtMs: 100_000 });
    expect(planWake(kept([["a", 100_000]]), 90_000)).toMatchObject({ kind: "wake", atMs: 90_000 });
    expect(planWake(kept([["a", 100_000]]), 0, { maxAheadMs: 60_000 })).toEqual({
      kind: "unschedulable",
      jobId: "a",
      runAtMs: 100_000,
      reason: "too-far",
    });
    expect(planWake(kept([["a", 100_000]]), 0, { deadlineAtMs: 100_000 })).toMatchObject({
      kind: "unschedulable",
      reason: "after-deadline",
    });
  });

  it("starts the host's own lead earlier, and skips a wake it served once that wake is due", () => {
    const kept = {
      instanceId: "i",
      leadMs: 30_000,
      acceptedAtMs: 0,
      snapshot: {
        revision: 1,
        wakes: [
          { jobId: "a", runAtMs: 100_000 },
          { jobId: "b", runAtMs: 400_000 },
        ],
      },
    };
    // The host's wake takes 45 s: it starts 30 s + 45 s before the job.
    expect(planWake(kept, 0, { aheadMs: 45_000 })).toEqual({
      kind: "wake",
      atMs: 25_000,
      jobId: "a",
      runAtMs: 100_000,
    });
    const served = new Set([wakeKey({ jobId: "a", runAtMs: 100_000 })]);
    // Served but still ahead (VM1 slept before it ran): woken for again, at once when its time has come.
    expect(planWake(kept, 90_000, { served })).toMatchObject({ kind: "wake", jobId: "a", atMs: 90_000 });
    // Served and due: the gateway had its run; the next job is planned instead.
    expect(planWake(kept, 100_000, { served })).toEqual({ kind: "wake", atMs: 370_000, jobId: "b", runAtMs: 400_000 });
    // Not served: a job due while VM1 slept still wakes it (the gateway catches a missed one-shot up).
    expect(planWake(kept, 200_000)).toMatchObject({ kind: "wake", jobId: "a", atMs: 200_000 });
    expect(
      planWake(kept, 500_000, { served: new Set([...served, wakeKey({ jobId: "b", runAtMs: 400_000 })]) }),
    ).toEqual({
      kind: "none",
    });
  });
});
