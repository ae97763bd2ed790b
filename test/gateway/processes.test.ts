// The harness's process hygiene, without a gateway: whatever a child it spawned starts (in its group, in a
// session of its own, in the background after the child exits) ends with the call, on success and timeout, and
// with the test process if that dies first (exit, signal, SIGKILL). Each check reads /proc; a probe that
// cannot read it throws, so a missing process table fails these specs instead of passing them.
import fs from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { REPO_ROOT } from "./openclaw.js";
import { isRunning, listProcesses, processEntry } from "./process-table.js";
import { ChildProcesses } from "./processes.js";
import { waitFor } from "./wait.js";

const processes = new ChildProcesses((text) => text);
const env = { PATH: process.env.PATH };
afterAll(() => processes.terminateAll(1_000));

/** The PIDs a child printed, one per line. */
function pidsIn(stdout: string): number[] {
  const pids = stdout
    .split("\n")
    .filter((line) => /^\d+$/.test(line.trim()))
    .map(Number);
  expect(pids.length, `no PID in ${JSON.stringify(stdout)}`).toBeGreaterThan(0);
  return pids;
}

function running(pids: number[]): number[] {
  return pids.filter((pid) => isRunning(pid));
}

describe("process probe", () => {
  it("sees a running process, not an ended one, and throws when /proc cannot be read", async () => {
    expect(isRunning(process.pid)).toBe(true);
    expect(listProcesses().map((entry) => entry.pid)).toContain(process.pid);
    const result = await processes.run("sh", ["-c", "echo $$"], { cwd: "/", env, timeoutMs: 10_000 });
    expect(result.code).toBe(0);
    expect(running(pidsIn(result.stdout))).toEqual([]);
    const missing = path.join(os.tmpdir(), "no-such-proc-table");
    expect(() => isRunning(process.pid, missing)).toThrow(/cannot read the process table/);
    expect(() => processEntry(1, missing)).toThrow(/cannot read the process table/);
    expect(() => listProcesses(missing)).toThrow(/cannot read the process table/);
  });
});

describe("ChildProcesses.run ends everything the child started", () => {
  it("on timeout: a grandchild in the child's group is gone", async () => {
    const result = await processes.run("sh", ["-c", "sleep 300 & echo $!; wait"], {
      cwd: "/",
      env,
      timeoutMs: 300,
      graceMs: 1_000,
    });
    // timedOut proves the shell was still waiting on a running sleep when the deadline passed.
    expect(result.timedOut).toBe(true);
    expect(running(pidsIn(result.stdout))).toEqual([]);
  });

  it("on timeout: a grandchild that left for a session and group of its own (like npm under openclaw) is gone", async () => {
    const result = await processes.run("sh", ["-c", "setsid sleep 300 & echo $!; wait"], {
      cwd: "/",
      env,
      timeoutMs: 300,
      graceMs: 1_000,
    });
    expect(result.timedOut).toBe(true);
    expect(running(pidsIn(result.stdout))).toEqual([]);
  });

  it("on success: a background grandchild the child left running is gone, and the child's output is complete", async () => {
    const script = "sleep 300 >/dev/null 2>&1 & echo $!; setsid sleep 300 >/dev/null 2>&1 & echo $!; echo done";
    const result = await processes.run("sh", ["-c", script], { cwd: "/", env, timeoutMs: 30_000, graceMs: 1_000 });
    expect(result).toMatchObject({ code: 0, timedOut: false });
    expect(result.stdout.trim().endsWith("done")).toBe(true);
    const pids = pidsIn(result.stdout);
    expect(pids).toHaveLength(2);
    expect(running(pids)).toEqual([]);
  });

  it("a grandchild that ignores SIGTERM is killed after the grace period", async () => {
    const result = await processes.run("sh", ["-c", "sh -c 'trap \"\" TERM; sleep 300' & echo $!; wait"], {
      cwd: "/",
      env,
      timeoutMs: 300,
      graceMs: 500,
    });
    expect(result.timedOut).toBe(true);
    expect(running(pidsIn(result.stdout))).toEqual([]);
  });
});

describe("a test process that dies still ends its children", () => {
  let bundle: string | undefined;
  let bundleDir: string | undefined;
  afterAll(async () => {
    if (bundleDir) await fs.rm(bundleDir, { recursive: true, force: true });
  });

  /** The harness's ChildProcesses bundled into a script that spawns two grandchildren and then dies as told. */
  async function workerScript(): Promise<string> {
    if (bundle) return bundle;
    const dir = await fs.mkdtemp(path.join(os.tmpdir(), "process-guard-"));
    bundleDir = dir;
    const entry = path.join(dir, "worker.ts");
    await fs.writeFile(
      entry,
      `import { ChildProcesses } from ${JSON.stringify(path.join(REPO_ROOT, "test/gateway/processes.ts"))};
const children = new ChildProcesses((text) => text);
const child = children.spawn("sh", ["-c", "sleep 300 & echo $!; setsid sleep 300 & echo $!; wait"], {
  cwd: "/",
  env: { PATH: process.env.PATH },
});
let seen = "";
child.stdout.on("data", (chunk) => {
  process.stdout.write(chunk);
  seen += chunk;
  if (seen.trim().split("\\n").length === 2) process.stdout.write("ready\\n");
});
// The test sends SIGUSR2 once it has seen the grandchildren running: then die as told.
process.on("SIGUSR2", () => {
  if (process.argv[2] === "exit") process.exit(3);
  setImmediate(() => {
    throw new Error("worker crashed");
  });
});
`,
    );
    const out = path.join(dir, "worker.mjs");
    const esbuild = path.join(REPO_ROOT, "node_modules", ".bin", "esbuild");
    const built = await processes.run(
      esbuild,
      [entry, "--bundle", "--platform=node", "--format=esm", `--outfile=${out}`, "--log-level=error"],
      { cwd: REPO_ROOT, env, timeoutMs: 60_000 },
    );
    expect(built.code, built.stderr).toBe(0);
    bundle = out;
    return out;
  }

  it.each([
    ["exits (process.exit)", "exit", "SIGUSR2"],
    ["crashes (uncaught exception)", "throw", "SIGUSR2"],
    ["is sent SIGTERM", "wait", "SIGTERM"],
    ["is SIGKILLed (no hook runs: the watchdog reaps)", "wait", "SIGKILL"],
  ] as const)("when it %s", async (_how, mode, signal) => {
    const worker = processes.spawn(process.execPath, [await workerScript(), mode], { cwd: "/", env });
    let stdout = "";
    worker.stdout?.setEncoding("utf8").on("data", (chunk: string) => {
      stdout += chunk;
    });
    const exited = new Promise((resolve) => worker.once("exit", resolve));
    await waitFor("the worker's grandchildren", async () => (stdout.includes("ready") ? true : undefined), {
      timeoutMs: 30_000,
      intervalMs: 50,
    });
    const grandchildren = pidsIn(stdout);
    const started = grandchildren.map((pid) => processEntry(pid));
    try {
      expect(grandchildren).toHaveLength(2);
      expect(running(grandchildren)).toEqual(grandchildren);
      // Only the worker itself is signalled; its grandchildren are in groups of their own.
      process.kill(worker.pid ?? 0, signal);
      await exited;
      await waitFor("the grandchildren to end", async () => (running(grandchildren).length === 0 ? true : undefined), {
        timeoutMs: 15_000,
        intervalMs: 100,
      }).catch(() => undefined);
      expect(running(grandchildren)).toEqual([]);
    } finally {
      // Should the guard fail, this spec still leaves nothing: end the very processes it saw start (same start time).
      for (const entry of started) {
        if (entry && entry.pgid > 1 && processEntry(entry.pid)?.start === entry.start)
          process.kill(-entry.pgid, "SIGKILL");
      }
    }
    await processes.terminate(worker, 1_000);
  });
});
