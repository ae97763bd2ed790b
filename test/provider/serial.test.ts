import { setTimeout as sleep } from "node:timers/promises";
import { describe, expect, it } from "vitest";
import { KeyedSerial } from "../../src/provider/serial.js";

describe("one command slot per sandbox", () => {
  it("tasks for one key never overlap and run in call order, even after a failure", async () => {
    const serial = new KeyedSerial();
    const events: string[] = [];
    const task =
      (name: string, fail = false) =>
      async () => {
        events.push(`start ${name}`);
        await sleep(20);
        events.push(`end ${name}`);
        if (fail) throw new Error(name);
        return name;
      };
    const results = await Promise.allSettled([
      serial.run("a", task("1")),
      serial.run("a", task("2", true)),
      serial.run("a", task("3")),
    ]);
    expect(events).toEqual(["start 1", "end 1", "start 2", "end 2", "start 3", "end 3"]);
    expect(results.map((r) => r.status)).toEqual(["fulfilled", "rejected", "fulfilled"]);
  });

  it("different keys run concurrently", async () => {
    const serial = new KeyedSerial();
    const events: string[] = [];
    const task = (name: string) => async () => {
      events.push(`start ${name}`);
      await sleep(20);
      events.push(`end ${name}`);
    };
    await Promise.all([serial.run("a", task("a")), serial.run("b", task("b"))]);
    expect(events.slice(0, 2)).toEqual(["start a", "start b"]);
  });
});
