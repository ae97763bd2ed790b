// stopHolder when the holder factory never speaks: a wedged factory (or a lost message) that never reports the
// holder's outer pid nor its exit must not hold a sandbox's stop forever. The holder (a real process here, in
// place of a namespace's PID 1) is killed by its own pid and the stop ends once it is gone.
import { spawn } from "node:child_process";
import { once } from "node:events";
import { describe, expect, it } from "vitest";
import { stopHolder } from "../../src/emulator/isolation.js";

const never = <T>() => new Promise<T>(() => undefined);

describe("stopHolder", () => {
  it("kills the holder and ends when the factory never reports the outer pid or the exit", async () => {
    const child = spawn("sleep", ["600"], { stdio: "ignore", detached: true });
    const exit = once(child, "exit");
    try {
      const pid = child.pid as number;
      await stopHolder(
        {
          pid,
          start: { outer: never(), exited: never(), isGone: () => false },
        },
        { outerMs: 50, exitMs: 50 },
      );
      const [code, signal] = await exit;
      expect({ code, signal }).toEqual({ code: null, signal: "SIGKILL" });
    } finally {
      if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
    }
  });
});
