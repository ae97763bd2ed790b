// Each sandbox has IPC, UTS and cgroup namespaces of its own: System V shared memory and POSIX message
// queues made in one sandbox are neither visible nor attachable from another sandbox or the host, the
// sandbox's hostname is its own (never the host's, and sandbox root cannot change the host's), and its
// cgroup paths are `/` (no host group name shows) while the host still sees it in the emulator's group.
import { execFileSync } from "node:child_process";
import { randomInt } from "node:crypto";
import { readFileSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { hostname, tmpdir } from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { connect, SDKS, sh, useEmulator } from "./harness.js";
import { hostPidsOf } from "./host-processes.js";

const emulator = useEmulator();
const { Sandbox } = SDKS[1]![1];

/** The shm ids `ipcs -m` lists in the namespace it runs in. */
function shmIds(ipcsOutput: string): string[] {
  return ipcsOutput
    .split("\n")
    .map((line) => line.trim().split(/\s+/))
    .filter((cols) => /^0x[0-9a-f]+$/.test(cols[0] ?? ""))
    .map((cols) => cols[1]!);
}

/** POSIX message queues of the host's IPC namespace, listed through a private mqueue mount. */
async function hostQueues(): Promise<string[]> {
  const dir = await mkdtemp(path.join(tmpdir(), "host-mqueue-"));
  try {
    const out = execFileSync("unshare", [
      "--mount",
      "--propagation",
      "private",
      "sh",
      "-c",
      `mount -t mqueue probe "${dir}" && ls -A "${dir}"`,
    ]);
    return out.toString().split("\n").filter(Boolean);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/** The cgroup paths of a `/proc/<pid>/cgroup` text, one per hierarchy. */
const cgroupPaths = (text: string) =>
  text
    .split("\n")
    .filter(Boolean)
    .map((line) => line.split(":").slice(2).join(":"));

describe("IPC, UTS and cgroup namespaces", () => {
  it("shared memory and message queues made in one sandbox stay in it", async () => {
    const hostBefore = shmIds(execFileSync("ipcs", ["-m"]).toString());
    const a = await Sandbox.create(connect(emulator()));
    const b = await Sandbox.create(connect(emulator()));
    const made = await sh(a, "ipcmk -M 4096");
    const id = /^Shared memory id: (\d+)$/.exec(made.out.trim())?.[1];
    expect(id).toMatch(/^\d+$/);
    expect(shmIds((await sh(a, "ipcs -m")).out)).toEqual([id]);
    expect(shmIds((await sh(b, "ipcs -m")).out)).toEqual([]);
    expect((await sh(b, `ipcs -m -i ${id} 2>&1`)).out).toBe(`ipcs: id ${id} not found\n`);
    expect(shmIds(execFileSync("ipcs", ["-m"]).toString())).toEqual(hostBefore);
    // A file made in the mqueue filesystem is a queue of the IPC namespace it was mounted in.
    expect((await sh(a, "touch /dev/mqueue/probe-queue && ls /dev/mqueue")).out).toBe("probe-queue\n");
    expect((await sh(b, "ls -A /dev/mqueue")).out).toBe("");
    expect(await hostQueues()).not.toContain("probe-queue");
    await sh(a, `ipcrm -m ${id}; rm /dev/mqueue/probe-queue`);
    await a.delete();
    await b.delete();
  });

  it("the hostname is the sandbox's own, and sandbox root cannot set the host's", async () => {
    const sandbox = await Sandbox.create(connect(emulator()));
    const inside = (await sh(sandbox, "cat /proc/sys/kernel/hostname")).out.trim();
    expect(inside).toBe("sandbox");
    expect(inside).not.toBe(hostname());
    const renamed = await sh(sandbox, "echo changed > /proc/sys/kernel/hostname; echo rc=$?", true);
    expect(renamed.out).toMatch(/rc=[1-9]/);
    expect(hostname()).not.toBe("changed");
    expect((await sh(sandbox, "cat /proc/sys/kernel/hostname")).out).toBe("sandbox\n");
    await sandbox.delete();
  });

  it("/proc/self/cgroup in a sandbox names no host group, while the host sees the process in the emulator's", async () => {
    const sandbox = await Sandbox.create({ ...connect(emulator()), resources: { vcpus: 1 } });
    // A sleep no other process on the host runs; the shell records its own cgroup view, then becomes it.
    const marker = ["sleep", `31.4159${randomInt(1_000_000)}`];
    await sandbox.runCommand({
      cmd: "sh",
      args: ["-c", `cat /proc/$$/cgroup > /tmp/own-cgroup; exec ${marker.join(" ")}`],
      detached: true,
    });
    let hostPids: number[] = [];
    for (let i = 0; i < 200 && hostPids.length === 0; i++) {
      await new Promise((r) => setTimeout(r, 50));
      hostPids = hostPidsOf(marker);
    }
    expect(hostPids).toHaveLength(1);
    const inside = (await sh(sandbox, "cat /tmp/own-cgroup")).out;
    const host = readFileSync(`/proc/${hostPids[0]}/cgroup`, "utf8");
    expect(cgroupPaths(inside).length).toBeGreaterThan(0);
    expect(cgroupPaths(inside).filter((p) => p !== "/")).toEqual([]);
    // The same process, seen from the host: inside this emulator's group for its session, so limited.
    expect(host).toMatch(new RegExp(`/vercel-sandbox-emulator-${process.pid}-[0-9a-f]+/[^/\n]+$`, "m"));
    // A command, a file read (a process of its own) and the sandbox's PID 1 see only `/` too.
    const views = [
      (await sh(sandbox, "cat /proc/self/cgroup")).out,
      (await sandbox.readFileToBuffer({ path: "/proc/self/cgroup" }))!.toString(),
      (await sh(sandbox, "cat /proc/1/cgroup")).out,
    ];
    for (const view of views) expect(cgroupPaths(view).filter((p) => p !== "/")).toEqual([]);
    await sandbox.delete();
    expect(hostPidsOf(marker)).toEqual([]);
  });
});
