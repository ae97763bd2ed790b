// The idle clock and the decisions over it, pure: what resets the clock, what blocks sleep, the deadline and
// the fence, and when the resident (re)notifies.
import { describe, expect, it } from "vitest";
import { IdleClock } from "../../src/suspend/clock.js";
import { checkSuspend, dueReason, sessionDeadline, shouldNotify } from "../../src/suspend/decide.js";
import { resolveSuspendSettings } from "../../src/suspend/settings.js";

const MIN = 60_000;

function fakeTime(start = 1_000_000) {
  let now = start;
  return {
    now: () => now,
    advance: (ms: number) => {
      now += ms;
    },
  };
}

describe("idle clock", () => {
  const policy = { idleMs: 45 * MIN, deadlineMarginMs: 5 * MIN };

  it("is idle once the interval passes without activity, and not a moment before", () => {
    const time = fakeTime();
    const clock = new IdleClock(time.now);
    time.advance(45 * MIN - 1);
    expect(dueReason(clock.snapshot(), policy)).toBeUndefined();
    time.advance(1);
    expect(dueReason(clock.snapshot(), policy)).toBe("idle");
  });

  it.each(["message", "model-call", "tool-call"] as const)("a %s resets the clock", (kind) => {
    const time = fakeTime();
    const clock = new IdleClock(time.now);
    time.advance(44 * MIN);
    clock.touch(kind);
    time.advance(44 * MIN);
    expect(dueReason(clock.snapshot(), policy)).toBeUndefined();
    expect(clock.snapshot().lastActivityKind).toBe(kind);
    time.advance(MIN);
    expect(dueReason(clock.snapshot(), policy)).toBe("idle");
  });

  it("an active turn blocks idle however long it runs, and its end restarts the interval", () => {
    const time = fakeTime();
    const clock = new IdleClock(time.now);
    clock.turnStarted("run-1");
    time.advance(10 * 45 * MIN);
    expect(dueReason(clock.snapshot(), policy)).toBeUndefined();
    expect(checkSuspend(clock.snapshot(), policy)).toEqual({ ok: false, retryAfterMs: 45 * MIN });
    clock.turnEnded("run-1", false);
    time.advance(45 * MIN);
    expect(dueReason(clock.snapshot(), policy)).toBe("idle");
  });

  it("a model call in flight blocks idle until it ends", () => {
    const time = fakeTime();
    const clock = new IdleClock(time.now);
    clock.modelCallStarted("call-1");
    time.advance(50 * MIN);
    expect(clock.snapshot().activeModelCalls).toBe(1);
    expect(dueReason(clock.snapshot(), policy)).toBeUndefined();
    clock.modelCallEnded("call-1");
    expect(clock.snapshot().activeModelCalls).toBe(0);
  });

  it("a worker provision in flight blocks idle and suspend until it settles; concurrent attempts count apart", () => {
    const time = fakeTime();
    const clock = new IdleClock(time.now);
    clock.provisionStarted("vsb_a");
    clock.provisionStarted("vsb_a");
    time.advance(50 * MIN);
    expect(clock.snapshot().activeProvisions).toBe(2);
    expect(dueReason(clock.snapshot(), policy)).toBeUndefined();
    expect(checkSuspend(clock.snapshot(), policy)).toMatchObject({ ok: false });
    clock.provisionEnded("vsb_a");
    expect(checkSuspend(clock.snapshot(), policy)).toMatchObject({ ok: false });
    clock.provisionEnded("vsb_a");
    expect(clock.snapshot()).toMatchObject({ activeProvisions: 0, lastActivityKind: "provision" });
    // Settling is activity: the idle interval counts from it.
    expect(dueReason(clock.snapshot(), policy)).toBeUndefined();
    time.advance(45 * MIN);
    expect(dueReason(clock.snapshot(), policy)).toBe("idle");
  });

  it("reading the clock (what a status poll does) never resets it", () => {
    const time = fakeTime();
    const clock = new IdleClock(time.now);
    for (let i = 0; i < 45; i++) {
      clock.snapshot();
      time.advance(MIN);
    }
    expect(dueReason(clock.snapshot(), policy)).toBe("idle");
  });

  it("restart (after resume) starts a fresh interval", () => {
    const time = fakeTime();
    const clock = new IdleClock(time.now);
    time.advance(50 * MIN);
    clock.restart();
    expect(dueReason(clock.snapshot(), policy)).toBeUndefined();
  });

  it("suspend is refused while busy or not yet idle, with the time until idle as the retry hint", () => {
    const time = fakeTime();
    const clock = new IdleClock(time.now);
    time.advance(40 * MIN);
    expect(checkSuspend(clock.snapshot(), policy)).toEqual({ ok: false, retryAfterMs: 5 * MIN });
    time.advance(5 * MIN);
    expect(checkSuspend(clock.snapshot(), policy)).toEqual({ ok: true, reason: "idle" });
  });
});

describe("session deadline", () => {
  it("is the session start plus the limit, or the absolute deadline, whichever comes first", () => {
    expect(sessionDeadline(1_000, {})).toBeUndefined();
    expect(sessionDeadline(1_000, { sessionLimitMs: 45 * MIN })).toBe(1_000 + 45 * MIN);
    expect(sessionDeadline(1_000, { deadlineAtMs: 5_000 })).toBe(5_000);
    expect(sessionDeadline(1_000, { sessionLimitMs: 45 * MIN, deadlineAtMs: 5_000 })).toBe(5_000);
  });

  it("the margin before it makes sleep due even with recent activity, and lets a draining turn through", () => {
    const time = fakeTime();
    const clock = new IdleClock(time.now);
    const policy = { idleMs: 45 * MIN, deadlineMarginMs: 5 * MIN, deadlineAtMs: time.now() + 45 * MIN };
    time.advance(40 * MIN - 1);
    clock.touch("message");
    expect(dueReason(clock.snapshot(), policy)).toBeUndefined();
    time.advance(1);
    expect(dueReason(clock.snapshot(), policy)).toBe("deadline");
    clock.turnStarted("run-1");
    expect(checkSuspend(clock.snapshot(), policy)).toEqual({ ok: true, reason: "deadline" });
  });
});

describe("failure fence", () => {
  const policy = { idleMs: 45 * MIN, deadlineMarginMs: 5 * MIN };

  it("a failed turn fences at once, without waiting for the idle interval", () => {
    const time = fakeTime();
    const clock = new IdleClock(time.now);
    clock.turnStarted("run-1");
    clock.turnEnded("run-1", true);
    expect(clock.fenced).toBe(true);
    expect(clock.snapshot().fence).toEqual({ sinceMs: time.now(), runId: "run-1" });
    expect(dueReason(clock.snapshot(), policy)).toBe("fenced");
    expect(checkSuspend(clock.snapshot(), policy)).toEqual({ ok: true, reason: "fenced" });
  });

  it("active work still blocks sleep while fenced", () => {
    const clock = new IdleClock(fakeTime().now);
    clock.turnStarted("run-1");
    clock.turnEnded("run-1", true);
    clock.turnStarted("run-2");
    expect(dueReason(clock.snapshot(), policy)).toBe("fenced");
    expect(checkSuspend(clock.snapshot(), policy).ok).toBe(false);
  });

  it("stays through a resume (cleanup is retried) and a successful turn does not lift it", () => {
    const clock = new IdleClock(fakeTime().now);
    clock.turnEnded("run-1", true);
    clock.restart();
    clock.turnStarted("run-2");
    clock.turnEnded("run-2", false);
    expect(clock.fenced).toBe(true);
  });
});

describe("notification schedule", () => {
  it("notifies once per reason, again after renotifyMs, and at once when the reason changes", () => {
    expect(shouldNotify(undefined, undefined, 0, 60_000)).toBe(false);
    expect(shouldNotify("idle", undefined, 0, 60_000)).toBe(true);
    expect(shouldNotify("idle", { reason: "idle", atMs: 0 }, 59_999, 60_000)).toBe(false);
    expect(shouldNotify("idle", { reason: "idle", atMs: 0 }, 60_000, 60_000)).toBe(true);
    expect(shouldNotify("fenced", { reason: "idle", atMs: 0 }, 1, 60_000)).toBe(true);
  });
});

describe("suspend settings", () => {
  it("default to a 45-minute idle interval and parse durations", () => {
    expect(resolveSuspendSettings({})).toEqual({
      idleMs: 45 * MIN,
      pollMs: 30_000,
      renotifyMs: 60_000,
      deadlineMarginMs: 5 * MIN,
    });
    expect(resolveSuspendSettings({ idleAfter: "10m", sessionLimit: "45m", pollInterval: 5 })).toMatchObject({
      idleMs: 10 * MIN,
      sessionLimitMs: 45 * MIN,
      pollMs: 1_000,
    });
  });
});
