import { describe, expect, it } from "vitest";
import { onInterrupt, REPEAT_MS, Teardown } from "../../src/main-job/teardown.js";

describe("Teardown", () => {
  it("runs every step, last added first, and reports the ones that failed", async () => {
    const order: string[] = [];
    const teardown = new Teardown();
    teardown.add("first", async () => order.push("first"));
    teardown.add("second", async () => {
      order.push("second");
      throw new Error("boom");
    });
    teardown.add("third", async () => order.push("third"));
    const logged: string[] = [];
    expect(await teardown.run((line) => logged.push(line))).toEqual(["second"]);
    expect(order).toEqual(["third", "second", "first"]);
    expect(logged.join("\n")).toContain("second failed: boom");
  });

  it("runs once however often it is asked (Ctrl-C during the job's own teardown)", async () => {
    let runs = 0;
    const teardown = new Teardown();
    teardown.add("count", async () => runs++);
    await Promise.all([teardown.run(() => {}), teardown.run(() => {})]);
    expect(runs).toBe(1);
  });
});

describe("onInterrupt", () => {
  it("calls back once for a signal delivered twice at once (terminal and forwarding parent)", () => {
    let calls = 0;
    let clock = 0;
    const exit = process.exit;
    const exits: unknown[] = [];
    process.exit = ((code?: number) => void exits.push(code)) as typeof process.exit;
    const unsubscribe = onInterrupt(
      () => calls++,
      () => clock,
    );
    try {
      process.emit("SIGINT", "SIGINT");
      clock = 10;
      process.emit("SIGINT", "SIGINT");
      expect(calls).toBe(1);
      expect(exits).toEqual([]);
      clock = 10 + REPEAT_MS;
      process.emit("SIGINT", "SIGINT");
      expect(exits).toEqual([130]);
    } finally {
      unsubscribe();
      process.exit = exit;
    }
  });
});
