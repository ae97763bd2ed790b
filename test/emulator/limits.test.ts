// One sandbox must not starve the gateway that hosts the emulator (issue 19): a sandbox gets its
// `vcpus` worth of memory (2 GB each, as on Vercel) and a bounded number of processes, enforced by the
// kernel inside that sandbox only, while the API and the other sandboxes keep answering.
import { spawn } from "node:child_process";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import * as sdk from "@vercel/sandbox";
import { describe, expect, it } from "vitest";
import { parseCgroupMounts, parseProcCgroup, SANDBOX_PIDS_MAX } from "../../src/emulator/cgroup-layout.js";
import { startLocalSandboxApi } from "../../src/emulator/index.js";
import { REPO_ROOT } from "../gateway/openclaw.js";
import { ensureBuilt } from "../setup/build.js";
import { connect, useEmulator } from "./harness.js";
import { holderOf, hostPidOf, uniqueSleep } from "./host-processes.js";

const emulator = useEmulator();
const { Sandbox } = sdk;
type SandboxOf = Awaited<ReturnType<typeof sdk.Sandbox.create>>;

// 3 GiB, touched page by page (Buffer.alloc fills), in 64 MiB steps: past a vcpus:1 sandbox's 2 GiB,
// and still bounded if nothing stops it (the machine is shared).
const HOG = `const held = [];
for (let mib = 0; mib < 3072; mib += 64) held.push(Buffer.alloc(64 << 20, 1));
console.log("allocated " + held.length * 64 + " MiB");`;

// Sleeps with a duration nothing else on the host uses, so the host can count the bomb's processes. The
// loop is bounded (well past the limit, far below the host's pid_max) in case the limit is missing.
const BOMB_SLEEP = "61.25";
const BOMB = `n=0; while [ $n -lt 6000 ]; do sleep ${BOMB_SLEEP} >/dev/null 2>&1 & n=$((n+1)); done; echo "started $n"`;

/** Host processes running the bomb's sleep. */
function bombProcesses(): number {
  let count = 0;
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      if (readFileSync(`/proc/${entry}/cmdline`, "utf8") === `sleep\0${BOMB_SLEEP}\0`) count++;
    } catch {
      // Exited while scanning.
    }
  }
  return count;
}

/** Host directories of the cgroups a host process's /proc/<pid>/cgroup text names for the limited controllers. */
function hostGroups(cgroupText: string): string[] {
  const mounts = parseCgroupMounts(readFileSync("/proc/self/mountinfo", "utf8"));
  return parseProcCgroup(cgroupText).flatMap(({ controllers, path: group }) => {
    const limited = controllers.filter((c) => ["memory", "pids", "cpu"].includes(c));
    if (controllers.length === 0) {
      const unified = mounts.find((m) => m.fsType === "cgroup2");
      return unified && group.includes("vercel-sandbox-emulator-") ? [`${unified.mountPoint}${group}`] : [];
    }
    return limited.map(
      (c) => `${mounts.find((m) => m.fsType === "cgroup" && m.superOptions.includes(c))!.mountPoint}${group}`,
    );
  });
}

/** Host directories of the limited groups host process `pid` is in. */
const hostGroupsOf = (pid: number) => hostGroups(readFileSync(`/proc/${pid}/cgroup`, "utf8"));

/** The API and a bystander sandbox answer: what a starving host would stop doing first. */
async function stillAnswering(api: ReturnType<typeof emulator>, bystander: SandboxOf): Promise<void> {
  const got = await Sandbox.get({ ...connect(api), name: bystander.name });
  expect(got.status).toBe("running");
  const echo = await bystander.runCommand("echo", ["alive"]);
  expect(await echo.stdout()).toBe("alive\n");
}

describe("resource limits per sandbox", () => {
  it("a memory hog past its sandbox's 2 GB per vCPU is killed inside the sandbox; the API and another sandbox keep answering", async () => {
    const api = emulator();
    const hogBox = await Sandbox.create({ ...connect(api), resources: { vcpus: 1 } });
    const bystander = await Sandbox.create({ ...connect(api), resources: { vcpus: 1 } });
    const hog = await hogBox.runCommand({ cmd: "node", args: ["-e", HOG], detached: true });
    let finished = false;
    const result = hog.wait().finally(() => {
      finished = true;
    });
    // A check counts only when the hog was still running after it answered: the whole check happened under the
    // hog's pressure. (The first check always runs; whether the hog outlived it is what is counted.)
    let checksWhileRunning = 0;
    while (!finished) {
      await stillAnswering(api, bystander);
      if (!finished) checksWhileRunning++;
    }
    const done = await result;
    expect(await done.stdout()).not.toMatch(/allocated/);
    expect(done.exitCode).toBe(137);
    expect(checksWhileRunning).toBeGreaterThan(0);
    await stillAnswering(api, bystander);
    // The hog's own sandbox survives it: only the hog was killed.
    expect(await (await hogBox.runCommand("echo", ["still here"])).stdout()).toBe("still here\n");
    await Promise.all([hogBox.delete(), bystander.delete()]);
  }, 120_000);

  it("a fork bomb stops at the sandbox's process limit, the host's count of its processes stays under it, and all of them end with the sandbox", async () => {
    const api = emulator();
    // 4 GB: the bomb's thousands of processes meet the process limit, not the memory limit.
    const bombBox = await Sandbox.create({ ...connect(api), resources: { vcpus: 2 } });
    const bystander = await Sandbox.create({ ...connect(api), resources: { vcpus: 1 } });
    const bomb = await bombBox.runCommand("sh", ["-c", BOMB]);
    // dash gives up at the first fork the kernel refuses.
    expect(bomb.exitCode).not.toBe(0);
    expect(await bomb.stderr()).toMatch(/Cannot fork/);
    expect(await bomb.stdout()).not.toMatch(/started/);
    const running = bombProcesses();
    expect(running).toBeLessThanOrEqual(SANDBOX_PIDS_MAX);
    // It was the limit that stopped it: all but the sandbox's own few processes are the bomb's.
    expect(running).toBeGreaterThan(SANDBOX_PIDS_MAX - 50);
    await stillAnswering(api, bystander);
    await bombBox.stop();
    expect(bombProcesses()).toBe(0);
    await stillAnswering(api, bystander);
    await Promise.all([bombBox.delete(), bystander.delete()]);
  }, 120_000);

  it("orphaned processes are reaped as they exit, so they never use up the sandbox's process limit", async () => {
    const api = emulator();
    const sandbox = await Sandbox.create({ ...connect(api), resources: { vcpus: 1 } });
    // The shell exits at once: its five children are orphans of the sandbox's PID 1 when they end.
    await sandbox.runCommand("sh", ["-c", "for i in 1 2 3 4 5; do sleep 0.2 >/dev/null 2>&1 & done"]);
    await new Promise((r) => setTimeout(r, 1_500));
    const zombies = await sandbox.runCommand("sh", ["-c", "grep -l '^State:.*Z' /proc/[0-9]*/status | wc -l"]);
    expect((await zombies.stdout()).trim()).toBe("0");
    await sandbox.delete();
  });

  it("each session's group holds its holder, commands and file reads; a stop removes it and close removes every group", async () => {
    const api = await startLocalSandboxApi();
    try {
      const a = await Sandbox.create({ ...connect(api), resources: { vcpus: 1 } });
      const b = await Sandbox.create({ ...connect(api), resources: { vcpus: 1 } });
      // Seen from the host (the sandbox sees only its own cgroup namespace, where every group is `/`).
      const groupsOf = async (sandbox: SandboxOf) => {
        const sleep = uniqueSleep(31);
        await sandbox.runCommand({ cmd: sleep[0]!, args: sleep.slice(1), detached: true });
        const command = await hostPidOf(sleep);
        const holder = holderOf(command);
        // A file read runs `cat` inside the sandbox: a file larger than the socket and pipe buffers keeps
        // it running until the stream is read.
        const file = `/tmp/read-${sleep[1]}`;
        await sandbox.runCommand("sh", ["-c", `head -c 64M /dev/zero > ${file}`]);
        const stream = (await sandbox.readFile({ path: file }))!;
        const fileRead = await hostPidOf(["cat", "--", file]);
        const groups = {
          holder: hostGroupsOf(holder),
          command: hostGroupsOf(command),
          fileRead: hostGroupsOf(fileRead),
        };
        let bytes = 0;
        for await (const chunk of stream) bytes += chunk.length;
        expect(bytes).toBe(64 << 20);
        expect(groups.holder).toEqual(groups.command);
        expect(groups.fileRead).toEqual(groups.command);
        return groups.command;
      };
      const groupsA = await groupsOf(a);
      const groupsB = await groupsOf(b);
      expect(groupsA.length).toBeGreaterThan(0);
      expect(groupsA.filter((d) => existsSync(d))).toEqual(groupsA);
      const parents = [...new Set([...groupsA, ...groupsB].map((d) => path.dirname(d)))];
      await a.stop();
      expect(groupsA.filter((d) => existsSync(d))).toEqual([]);
      expect(groupsB.filter((d) => existsSync(d))).toEqual(groupsB);
      await api.close();
      expect([...groupsB, ...parents].filter((d) => existsSync(d))).toEqual([]);
    } finally {
      await api.close();
    }
  }, 120_000);

  it("a boot on the outer process made ahead gets its own vCPUs' limits, and a boot after that process died still works", async () => {
    const api = emulator();
    const memoryLimit = (groups: string[]) => {
      const memory = groups.find((d) => existsSync(path.join(d, "memory.max")) || d.includes("/memory/"))!;
      const v2 = existsSync(path.join(memory, "memory.max"));
      return Number(readFileSync(path.join(memory, v2 ? "memory.max" : "memory.limit_in_bytes"), "utf8"));
    };
    const holderGroups = async (sandbox: SandboxOf) => {
      const sleep = uniqueSleep(29);
      await sandbox.runCommand({ cmd: sleep[0]!, args: sleep.slice(1), detached: true });
      const holder = holderOf(await hostPidOf(sleep));
      return { holder, groups: hostGroupsOf(holder) };
    };
    const parentOf = (pid: number) => Number(/^PPid:\t(\d+)$/m.exec(readFileSync(`/proc/${pid}/status`, "utf8"))![1]);
    // The factory's children that are no running sandbox's outer process: the spare, if there is one.
    const sparesBeside = (factory: number, running: number[]) => {
      const outers = running.map(parentOf);
      return () =>
        readdirSync("/proc")
          .filter((e) => /^\d+$/.test(e) && !outers.includes(Number(e)))
          .filter((e) => {
            try {
              return parentOf(Number(e)) === factory;
            } catch {
              return false;
            }
          });
    };
    const first = await Sandbox.create({ ...connect(api), resources: { vcpus: 1 } });
    const a = await holderGroups(first);
    expect(memoryLimit(a.groups)).toBe(2 * 1024 ** 3);
    const factory = parentOf(parentOf(a.holder));
    // A stop makes the next boots' spares, two (their groups named `spare_…`).
    await first.stop();
    await expect.poll(sparesBeside(factory, []), { timeout: 10_000 }).toHaveLength(2);
    const second = await Sandbox.create({ ...connect(api), resources: { vcpus: 4 } });
    const b = await holderGroups(second);
    expect(b.groups.length).toBeGreaterThan(0);
    expect(b.groups.every((d) => path.basename(d).startsWith("spare_"))).toBe(true);
    expect(memoryLimit(b.groups)).toBe(4 * 2 * 1024 ** 3);
    // A boot that took a spare makes none (it would compete with that sandbox's first command); the next stop
    // refills them. Kill them: the next boot makes its own groups and outer process.
    const spares = sparesBeside(factory, [b.holder]);
    expect(spares()).toHaveLength(1);
    await second.stop();
    await expect.poll(spares, { timeout: 10_000 }).toHaveLength(2);
    for (const pid of spares()) process.kill(Number(pid), "SIGKILL");
    await new Promise((r) => setTimeout(r, 200));
    const third = await Sandbox.create({ ...connect(api), resources: { vcpus: 2 } });
    const c = await holderGroups(third);
    expect(c.groups.some((d) => path.basename(d).startsWith("spare_"))).toBe(false);
    expect(memoryLimit(c.groups)).toBe(2 * 2 * 1024 ** 3);
    expect(await (await third.runCommand("echo", ["booted"])).stdout()).toBe("booted\n");
    await Promise.all([first.delete(), second.delete(), third.delete()]);
  }, 120_000);

  it("an emulator killed with SIGKILL leaves no cgroup behind", async () => {
    await ensureBuilt();
    // A killed emulator cannot remove its temp data: the test gives it a data dir and removes that.
    const dataDir = await mkdtemp(path.join(tmpdir(), "emu-killed-"));
    const sleep = uniqueSleep(600);
    const script = `
      const { startLocalSandboxApi } = await import(${JSON.stringify(path.join(REPO_ROOT, "dist/emulator/index.js"))});
      const { Sandbox } = await import("@vercel/sandbox");
      const api = await startLocalSandboxApi({ dataDir: ${JSON.stringify(dataDir)} });
      const sandbox = await Sandbox.create({ ...api.credentials, fetch: api.fetch, resources: { vcpus: 1 } });
      await sandbox.runCommand({ cmd: "sleep", args: [${JSON.stringify(sleep[1])}], detached: true });
      process.send("running");`;
    const child = spawn(process.execPath, ["--input-type=module", "-e", script], {
      cwd: REPO_ROOT,
      stdio: ["ignore", "inherit", "inherit", "ipc"],
    });
    try {
      await new Promise<void>((resolve, reject) => {
        child.once("message", () => resolve());
        child.once("exit", (code) => reject(new Error(`the emulator process exited early (${code})`)));
      });
      const groups = hostGroupsOf(await hostPidOf(sleep));
      const all = [...groups, ...new Set(groups.map((g) => path.dirname(g)))];
      expect(groups.length).toBeGreaterThan(0);
      expect(all.filter((d) => existsSync(d))).toEqual(all);
      child.kill("SIGKILL");
      for (let i = 0; i < 200 && all.some((d) => existsSync(d)); i++) await new Promise((r) => setTimeout(r, 50));
      expect(all.filter((d) => existsSync(d))).toEqual([]);
    } finally {
      child.kill("SIGKILL");
      await rm(dataDir, { recursive: true, force: true });
    }
  }, 300_000); // ensureBuilt may rebuild the package first (about a minute on a loaded machine)
});
