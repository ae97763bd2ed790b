import { readdirSync, readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { startLocalSandboxApi } from "../../src/emulator/index.js";
import { connect, raw, SDKS, useEmulator } from "./harness.js";

const emulator = useEmulator();

/** Host PIDs of every live (non-zombie) descendant of this test process. */
function descendants(): number[] {
  const parent = new Map<number, number>();
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, "utf8");
      const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      if (fields[0] !== "Z") parent.set(Number(entry), Number(fields[1]));
    } catch {
      // Exited while scanning.
    }
  }
  const found: number[] = [];
  const walk = (pid: number) => {
    for (const [child, ppid] of parent) {
      if (ppid === pid) {
        found.push(child);
        walk(child);
      }
    }
  };
  walk(process.pid);
  return found;
}

const alive = (pid: number) => {
  try {
    return !readFileSync(`/proc/${pid}/stat`, "utf8").includes(") Z ");
  } catch {
    return false;
  }
};

async function until(check: () => Promise<boolean>, what: string): Promise<void> {
  for (let i = 0; i < 200; i++) {
    if (await check()) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`timed out waiting for ${what}`);
}

describe.each(SDKS)("processes with SDK %s", (_version, { Sandbox }) => {
  it("a session that reaches its timeout ends its processes and stops; the next command resumes", async () => {
    const api = emulator();
    const sandbox = await Sandbox.create({ ...connect(api), timeout: 1_000 });
    const sleeper = await sandbox.runCommand({ cmd: "sleep", args: ["600"], detached: true });
    await until(
      async () => (await Sandbox.get({ ...connect(api), name: sandbox.name })).status === "stopped",
      "the session to stop",
    );
    expect((await sleeper.wait()).exitCode).toBe(137);
    expect((await sandbox.runCommand("true")).exitCode).toBe(0);
    await sandbox.delete();
  });

  it("deny-all cuts the sandbox off the network; allow-all never reaches the host's loopback", async () => {
    const api = emulator();
    const port = new URL(api.url).port;
    const raw = `exec 3<>/dev/tcp/127.0.0.1/${port} && echo reached || echo blocked`;
    const proxied = `curl -s --max-time 20 --noproxy '' http://127.0.0.1:${port}/v2/sandboxes`;
    const sandbox = await Sandbox.create(connect(api));
    expect(await (await sandbox.runCommand("bash", ["-c", raw])).stdout()).toBe("blocked\n");
    expect(await (await sandbox.runCommand("bash", ["-c", proxied])).stdout()).toMatch(
      /not allowed by the sandbox network policy/,
    );
    await sandbox.updateNetworkPolicy("deny-all");
    expect(await (await sandbox.runCommand("bash", ["-c", raw])).stdout()).toBe("blocked\n");
    await sandbox.delete();
  });
});

describe("shutdown", () => {
  it("close() ends every process the emulator started and removes its temp data", async () => {
    const api = await startLocalSandboxApi();
    const { Sandbox } = SDKS[1]![1];
    const before = new Set(descendants());
    const a = await Sandbox.create(connect(api));
    const b = await Sandbox.create(connect(api));
    await a.runCommand({ cmd: "sleep", args: ["600"], detached: true });
    await b.runCommand({ cmd: "bash", args: ["-c", "sleep 600 & sleep 600"], detached: true });
    // A custom policy also starts the session's egress proxy (see network.test.ts).
    const c = await Sandbox.create({ ...connect(api), networkPolicy: { allow: ["allowed.invalid"] } });
    await c.runCommand({ cmd: "sleep", args: ["600"], detached: true });
    // Only the emulator's own kinds of process: the test runner may start helpers of its own meanwhile.
    const ours = new Set(["unshare", "nsenter", "sleep", "bash", "sh"]);
    const comm = (pid: number) => {
      try {
        return readFileSync(`/proc/${pid}/comm`, "utf8").trim();
      } catch {
        return "";
      }
    };
    const started = descendants().filter((pid) => !before.has(pid) && ours.has(comm(pid)));
    expect(started.length).toBeGreaterThanOrEqual(8);
    await api.close();
    expect(started.filter(alive).map((pid) => `${pid} ${comm(pid)}`)).toEqual([]);
    await expect(raw(api, "GET", "/v2/sandboxes")).rejects.toThrow();
  });
});
