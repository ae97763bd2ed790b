// Scheduled wake, the plugin side: the cron projection sends complete, ordered wake snapshots with rising
// revisions, a newer request aborts the send under way (a stale snapshot is never the last one accepted), a
// failed send is retried, and the idle clock treats a job due within the wake lead as a reason not to sleep.
import { describe, expect, it } from "vitest";
import type { WakeNotification } from "../../src/protocol/index.js";
import { IdleClock } from "../../src/suspend/clock.js";
import { dueReason, idleInMs } from "../../src/suspend/decide.js";
import { type CronReader, WakeProjector } from "../../src/suspend/wake-projection.js";

const logger = { info: () => undefined, warn: () => undefined };

/** The gateway's scheduler as the hook context hands it over: a list of jobs the spec edits. */
function scheduler(jobs: Array<{ id: string; enabled?: boolean; state?: { nextRunAtMs?: number } }>): CronReader & {
  jobs: typeof jobs;
} {
  return { jobs, list: async () => jobs.map((j) => ({ ...j })) };
}

describe("wake projection", () => {
  it("projects every enabled job's next run, soonest first, as one snapshot with a rising revision", async () => {
    const sent: WakeNotification[] = [];
    let now = 5_000;
    const projector = new WakeProjector({
      instanceId: "i-1",
      leadMs: 60_000,
      logger,
      now: () => now,
      send: async (n) => {
        sent.push(n);
      },
    });
    const cron = scheduler([
      { id: "b", state: { nextRunAtMs: 90_000 } },
      { id: "a", state: { nextRunAtMs: 40_000 } },
      { id: "off", enabled: false, state: { nextRunAtMs: 10_000 } },
      { id: "none", state: {} },
    ]);
    await projector.reconciled(true, cron, new AbortController().signal);
    expect(sent).toHaveLength(1);
    expect(sent[0]).toMatchObject({ version: 1, kind: "wake", instanceId: "i-1", leadMs: 60_000 });
    expect(sent[0]?.snapshot.wakes).toEqual([
      { jobId: "a", runAtMs: 40_000 },
      { jobId: "b", runAtMs: 90_000 },
    ]);
    cron.jobs.splice(1, 1);
    await projector.changed();
    expect(sent[1]?.snapshot.wakes).toEqual([{ jobId: "b", runAtMs: 90_000 }]);
    expect(sent[1]?.snapshot.revision).toBeGreaterThan(sent[0]?.snapshot.revision ?? Infinity);
    now = 1; // a clock going back still never repeats a revision
    await projector.changed();
    expect(sent[2]?.snapshot.revision).toBeGreaterThan(sent[1]?.snapshot.revision ?? Infinity);
    expect(projector.nextWakeAtMs()).toBe(90_000);
  });

  it("a newer change aborts the send under way; the last snapshot the host accepts is the newest", async () => {
    const accepted: WakeNotification[] = [];
    const aborted: number[] = [];
    let releaseFirst: (() => void) | undefined;
    const projector = new WakeProjector({
      instanceId: "i-2",
      leadMs: 1_000,
      logger,
      send: (n, signal) =>
        new Promise<void>((resolve, reject) => {
          const accept = () => {
            if (signal.aborted) return;
            accepted.push(n);
            resolve();
          };
          signal.addEventListener("abort", () => {
            aborted.push(n.snapshot.revision);
            reject(signal.reason);
          });
          if (!releaseFirst) releaseFirst = accept;
          else accept();
        }),
    });
    const cron = scheduler([{ id: "a", state: { nextRunAtMs: 10_000 } }]);
    const first = projector.reconciled(true, cron, new AbortController().signal);
    await new Promise((r) => setTimeout(r, 10));
    cron.jobs[0] = { id: "a", state: { nextRunAtMs: 20_000 } };
    const second = projector.changed();
    releaseFirst?.();
    await Promise.all([first, second]);
    expect(aborted).toHaveLength(1);
    expect(accepted.map((n) => n.snapshot.wakes[0]?.runAtMs)).toEqual([20_000]);
  });

  it("a failed send is retried until the host accepts it", async () => {
    let attempts = 0;
    const projector = new WakeProjector({
      instanceId: "i-3",
      leadMs: 1_000,
      logger,
      retryMs: 5,
      send: async () => {
        attempts++;
        if (attempts < 3) throw new Error("host answered 503");
      },
    });
    await projector.reconciled(true, scheduler([{ id: "a", state: { nextRunAtMs: 1 } }]), new AbortController().signal);
    expect(attempts).toBe(3);
  });

  it("cron disabled projects an empty list; a change before any reconciliation projects nothing", async () => {
    const sent: WakeNotification[] = [];
    const projector = new WakeProjector({ instanceId: "i-4", leadMs: 0, logger, send: async (n) => void sent.push(n) });
    await projector.changed();
    expect(sent).toEqual([]);
    await projector.reconciled(false, undefined, new AbortController().signal);
    expect(sent.map((n) => n.snapshot.wakes)).toEqual([[]]);
  });
});

describe("idle clock and scheduled wake", () => {
  const MIN = 60_000;
  it("a job due within the wake lead holds sleep; once it is well past, the clock is idle again", () => {
    let now = 1_000_000;
    let next: number | undefined = now + 3 * MIN;
    const clock = new IdleClock(() => now);
    clock.readNextWakeFrom(() => next);
    const policy = { idleMs: 10 * MIN, deadlineMarginMs: MIN, wakeLeadMs: 2 * MIN };
    now += 10 * MIN; // idle for 10 minutes; the job was due 7 minutes ago, more than the lead: not holding
    expect(dueReason(clock.snapshot(), policy)).toBe("idle");
    next = now + 90_000; // due in 1.5 minutes, within the 2-minute lead
    expect(dueReason(clock.snapshot(), policy)).toBeUndefined();
    expect(idleInMs(clock.snapshot(), policy)).toBeGreaterThanOrEqual(90_000);
    next = now + 5 * MIN; // beyond the lead: sleep, the host wakes VM1 for it
    expect(dueReason(clock.snapshot(), policy)).toBe("idle");
    next = undefined;
    expect(dueReason(clock.snapshot(), { ...policy, wakeLeadMs: undefined })).toBe("idle");
  });
});
