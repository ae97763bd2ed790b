// The keepalive's own decisions: how much to extend by, and which arming a settling tick may end. The ticks
// here are the provider's callbacks (a parameter of the keepalive), so they are plain functions.
import { setTimeout as sleep } from "node:timers/promises";
import { describe, expect, it } from "vitest";
import { registerSecret } from "../../src/infra/redact.js";
import { extensionMs, Keepalive, type TickOutcome } from "../../src/provider/keepalive.js";

const MINUTE = 60_000;

async function until(condition: () => boolean, what: string) {
  for (let i = 0; i < 400; i += 1) {
    if (condition()) return;
    await sleep(5);
  }
  throw new Error(`timed out waiting for ${what}`);
}

describe("extension size", () => {
  const now = Date.UTC(2026, 0, 1);

  it("tops a known expiry back up to the profile timeout", () => {
    expect(extensionMs(new Date(now + 20 * MINUTE), now, 30 * MINUTE, 10 * MINUTE)).toBe(10 * MINUTE);
    expect(extensionMs(new Date(now - MINUTE), now, 30 * MINUTE, 10 * MINUTE)).toBe(31 * MINUTE);
  });

  it("asks for nothing when the session is already at the timeout", () => {
    expect(extensionMs(new Date(now + 30 * MINUTE), now, 30 * MINUTE, 10 * MINUTE)).toBe(0);
    expect(extensionMs(new Date(now + 30 * MINUTE - 999), now, 30 * MINUTE, 10 * MINUTE)).toBe(0);
  });

  it("with an unknown expiry, extends by one tick interval, never by the clock", () => {
    expect(extensionMs(undefined, now, 30 * MINUTE, 10 * MINUTE)).toBe(10 * MINUTE);
    expect(extensionMs(undefined, now, 2 * MINUTE, 10 * MINUTE)).toBe(2 * MINUTE);
    expect(extensionMs(undefined, now, 30 * MINUTE, 10)).toBe(0);
  });
});

describe("keepalive arming", () => {
  it("a tick that settles after its lease was disarmed and re-armed leaves the new arming running", async () => {
    const keepalive = new Keepalive({ warn: () => undefined }, 5);
    let release: (outcome: TickOutcome) => void = () => undefined;
    let started = 0;
    keepalive.arm({
      leaseId: "vsb_1",
      timeoutMs: MINUTE,
      tick: () => {
        started += 1;
        return new Promise((resolve) => {
          release = resolve;
        });
      },
    });
    await until(() => started === 1, "the first tick");
    const disarmed = keepalive.disarm("vsb_1");
    keepalive.arm({ leaseId: "vsb_1", timeoutMs: MINUTE, tick: async () => ({ keep: true }) });
    release({ keep: false, reason: "the old session stopped" });
    await disarmed;
    expect(keepalive.isArmed("vsb_1")).toBe(true);
    await keepalive.stopAll();
    expect(keepalive.isArmed("vsb_1")).toBe(false);
  });

  it("ending for a reason is logged with the reason, redacted; a lease that stopped running ends quietly", async () => {
    registerSecret("tok_rotated_abcdef");
    const warnings: string[] = [];
    const keepalive = new Keepalive({ warn: (m) => warnings.push(m) }, 5);
    keepalive.arm({
      leaseId: "vsb_refused",
      timeoutMs: MINUTE,
      tick: async () => ({ keep: false, reason: "403 token tok_rotated_abcdef is not valid" }),
    });
    keepalive.arm({ leaseId: "vsb_stopped", timeoutMs: MINUTE, tick: async () => ({ keep: false }) });
    await until(() => keepalive.armed().length === 0, "both keepalives to end");
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toContain("vsb_refused");
    expect(warnings[0]).toContain("403");
    expect(warnings[0]).not.toContain("tok_rotated_abcdef");
  });
});
