// One sandbox whose outer process does not read its requests (here stopped with SIGSTOP from the host; in life, a
// sandbox throttled by its own CPU quota, as its outer process is in its groups) must not stall the others: the
// holders' factory queues what that outer process has not taken yet, and another sandbox's commands run on.
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { connect, SDKS, sh, useEmulator } from "./harness.js";
import { holderOf, hostPidOf, uniqueSleep } from "./host-processes.js";

const emulator = useEmulator();
const { Sandbox } = SDKS[1]![1];

const parentOf = (pid: number) =>
  Number(
    readFileSync(`/proc/${pid}/stat`, "utf8")
      .replace(/^.*\) /, "")
      .split(" ")[1],
  );

describe("a sandbox that does not read its requests", () => {
  it("stalls none of the others", async () => {
    const [slow, other] = await Promise.all([Sandbox.create(connect(emulator())), Sandbox.create(connect(emulator()))]);
    const marker = uniqueSleep(60);
    const running = await slow.runCommand({ cmd: marker[0]!, args: marker.slice(1), detached: true });
    // The holder's parent, outside the sandbox's PID namespace, is the outer process that starts its programs.
    const outer = parentOf(holderOf(await hostPidOf(marker)));
    process.kill(outer, "SIGSTOP");
    try {
      // More than a socket's buffer of requests for the stopped outer process (each carries a 128 KiB variable).
      const big = { FILL: "x".repeat(128 * 1024) };
      for (let i = 0; i < 16; i++) await slow.runCommand({ cmd: "true", env: big, detached: true });
      const result = await Promise.race([
        sh(other, "echo alive"),
        new Promise<undefined>((r) => setTimeout(() => r(undefined), 15_000).unref()),
      ]);
      expect(result?.out).toBe("alive\n");
    } finally {
      process.kill(outer, "SIGCONT");
    }
    await running.kill();
    expect((await sh(slow, "echo resumed")).out).toBe("resumed\n");
    await Promise.all([slow.delete(), other.delete()]);
  });
});
