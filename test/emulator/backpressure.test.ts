// A command's output reaches its followers at their pace: a follower that reads slowly holds the command back
// (its pipes pause), so a sandbox printing hundreds of megabytes never piles them up in the memory of the process
// hosting the emulator (the gateway, with backend "embedded").
import { setTimeout as sleep } from "node:timers/promises";
import * as sdk from "@vercel/sandbox";
import { describe, expect, it } from "vitest";
import { connect, useEmulator } from "./harness.js";

const emulator = useEmulator();
const PRINTED = 400 * 1024 * 1024;

const heldBytes = () => {
  const m = process.memoryUsage();
  return m.heapUsed + m.external + m.arrayBuffers;
};

describe("output backpressure", () => {
  it("a slow follower holds a command printing 400 MiB back instead of the emulator buffering it; a kill still ends it", async () => {
    const api = emulator();
    const sandbox = await sdk.Sandbox.create(connect(api));
    const baseline = heldBytes();
    let peak = baseline;
    const sampler = setInterval(() => {
      peak = Math.max(peak, heldBytes());
    }, 10);
    try {
      const command = await sandbox.runCommand({
        cmd: "sh",
        args: ["-c", `head -c ${PRINTED} /dev/zero | tr '\\0' a; echo printed-all`],
        detached: true,
      });
      // The follower reads the log stream itself (the SDK's reader buffers on its own side), one network chunk
      // every 20 ms for about 3 s: far less than the command prints meanwhile.
      const sessionId = (command as unknown as { sessionId: string }).sessionId;
      const url = `https://vercel.com/api/v2/sandboxes/sessions/${sessionId}/cmd/${command.cmdId}/logs?teamId=${api.credentials.teamId}`;
      const response = await api.fetch(url, { headers: { authorization: `Bearer ${api.credentials.token}` } });
      expect(response.status).toBe(200);
      const reader = response.body!.getReader();
      let read = 0;
      const started = Date.now();
      while (Date.now() - started < 3_000) {
        const { value, done } = await reader.read();
        if (done) break;
        read += value.byteLength;
        await sleep(20);
      }
      peak = Math.max(peak, heldBytes());
      expect(read).toBeLessThan(PRINTED / 4);
      // Held back: the command cannot have printed what nobody read.
      expect((await sandbox.getCommand(command.cmdId)).exitCode).toBeNull();
      expect(peak - baseline).toBeLessThan(150 * 1024 * 1024);
      // A command held back by a follower still ends when killed.
      await command.kill("SIGKILL");
      expect((await command.wait()).exitCode).not.toBe(0);
      await reader.cancel();
    } finally {
      clearInterval(sampler);
      await sandbox.delete();
    }
  }, 120_000);
});
