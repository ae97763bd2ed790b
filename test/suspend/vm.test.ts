// Sleeping and waking VM1 with the host library, against the emulator (real processes, real snapshots): sleep
// keeps exactly the newest two checkpoints and proves the older ones deleted; wake restores the disk as it was at
// sleep, no process from before survives, and the start command runs fresh until the readiness probe passes.
import { Sandbox, Snapshot } from "@vercel/sandbox";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type LocalSandboxApi, startLocalSandboxApi } from "../../src/emulator/index.js";
import { checkpointsToDelete, sleepVm, type VmConnection, wakeVm } from "../../src/host/index.js";

describe("checkpoint retention", () => {
  const c = (id: string, createdAt: number, status = "created") => ({ id, createdAt, status });

  it("keeps the newest `keep` live checkpoints and deletes every older one", () => {
    expect(checkpointsToDelete([c("a", 1), c("b", 3), c("c", 2), c("d", 4)], 2)).toEqual(["c", "a"]);
  });

  it("ignores checkpoints already deleted or failed", () => {
    expect(checkpointsToDelete([c("a", 1, "deleted"), c("b", 2, "failed"), c("c", 3)], 2)).toEqual([]);
  });

  it("keeps one when asked for one, and refuses a retention below one instead of reading it as one", () => {
    expect(checkpointsToDelete([c("a", 1), c("b", 2)], 1)).toEqual(["a"]);
    for (const keep of [0, -1, 1.5, Number.NaN]) {
      expect(() => checkpointsToDelete([c("a", 1), c("b", 2)], keep)).toThrow(RangeError);
    }
  });
});

let api: LocalSandboxApi | undefined;
let connection: VmConnection;
const NAME = "vm1-spec";
const cycleMs: number[] = [];

beforeAll(async () => {
  api = await startLocalSandboxApi({});
  connection = { ...api.credentials, fetch: api.fetch };
  await Sandbox.create({ ...connection, name: NAME, runtime: "node24" } as Parameters<typeof Sandbox.create>[0]);
}, 120_000);

afterAll(async () => {
  await api?.close();
  if (cycleMs.length > 0) process.stderr.write(`[vm spec] sleep → wake ms: ${JSON.stringify(cycleMs)}\n`);
}, 60_000);

async function sh(script: string): Promise<{ code: number; out: string }> {
  const sandbox = await Sandbox.get({ ...connection, name: NAME });
  const done = await sandbox.runCommand("sh", ["-c", script]);
  return { code: done.exitCode, out: (await done.stdout()).trim() };
}

/** Ids of VM1's snapshots, as the API lists them. */
async function checkpointIds(): Promise<string[]> {
  const listed = await Snapshot.list({ ...connection, name: NAME } as Parameters<typeof Snapshot.list>[0]);
  return (await listed.toArray()).map((snapshot) => snapshot.id);
}

/** Command lines of every process in the sandbox. */
const processes = () => sh('for p in /proc/[0-9]*; do tr "\\0" " " < $p/cmdline 2>/dev/null; echo; done');

const wake = () =>
  wakeVm({
    connection,
    name: NAME,
    start: { cmd: "sh", args: ["-c", "date +%s%N > /vercel/sandbox/started-at; exec sleep 602"] },
    ready: async (sandbox) => (await sandbox.runCommand("test", ["-s", "/vercel/sandbox/started-at"])).exitCode === 0,
    timeoutMs: 60_000,
    pollMs: 100,
  });

describe("sleep and wake VM1 on the emulator", () => {
  it("a sleep asked to keep zero checkpoints is refused before VM1 is touched", { timeout: 60_000 }, async () => {
    const before = await checkpointIds();
    await expect(sleepVm({ connection, name: NAME, keep: 0 })).rejects.toThrow(RangeError);
    expect((await Sandbox.get({ ...connection, name: NAME })).status).toBe("running");
    expect(await checkpointIds()).toEqual(before);
  });

  it("wake restores files written before sleep, and starts the gateway command fresh", {
    timeout: 120_000,
  }, async () => {
    await sh("echo before-sleep > /vercel/sandbox/notes.txt");
    const sandbox = await Sandbox.get({ ...connection, name: NAME });
    await sandbox.runCommand({ cmd: "sleep", args: ["601"], detached: true });
    expect((await processes()).out).toContain("sleep 601");

    const started = performance.now();
    const slept = await sleepVm({ connection, name: NAME });
    expect((await Sandbox.get({ ...connection, name: NAME })).status).toBe("stopped");
    await wake();
    cycleMs.push(Math.round(performance.now() - started));

    expect((await sh("cat /vercel/sandbox/notes.txt")).out).toBe("before-sleep");
    const after = (await processes()).out;
    expect(after).not.toContain("sleep 601");
    expect(after).toContain("sleep 602");
    expect(slept.kept).toEqual([slept.snapshotId]);
  });

  it("repeated sleeps keep exactly the newest two checkpoints; each wake sees the latest disk", {
    timeout: 180_000,
  }, async () => {
    const ids: string[] = [];
    for (const round of [1, 2, 3]) {
      await sh(`echo round-${round} > /vercel/sandbox/notes.txt`);
      const started = performance.now();
      const slept = await sleepVm({ connection, name: NAME });
      ids.push(slept.snapshotId);
      expect(slept.kept).toHaveLength(2);
      expect(slept.kept[0]).toBe(slept.snapshotId);
      await wake();
      cycleMs.push(Math.round(performance.now() - started));
      expect((await sh("cat /vercel/sandbox/notes.txt")).out).toBe(`round-${round}`);
    }
    const listed = await (
      await Snapshot.list({ ...connection, name: NAME } as Parameters<typeof Snapshot.list>[0])
    ).toArray();
    const live = listed.filter((s) => s.status === "created").map((s) => s.id);
    expect(live.sort()).toEqual(ids.slice(-2).sort());
    expect(listed.filter((s) => s.status === "created")).toHaveLength(2);
  });
});
