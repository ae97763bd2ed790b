// Each sandbox has IPC and UTS namespaces of its own: System V shared memory and POSIX message queues
// made in one sandbox are neither visible nor attachable from another sandbox or the host, and the
// sandbox's hostname is its own (never the host's, and sandbox root cannot change the host's).
import { execFileSync } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { hostname, tmpdir } from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { connect, SDKS, useEmulator } from "./harness.js";

const emulator = useEmulator();
const { Sandbox } = SDKS[1]![1];
type Box = Awaited<ReturnType<typeof Sandbox.create>>;

async function sh(sandbox: Box, script: string, sudo = false) {
  const done = await sandbox.runCommand({ cmd: "bash", args: ["-c", script], sudo });
  return { code: done.exitCode, out: await done.stdout(), err: await done.stderr() };
}

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

describe("IPC and UTS namespaces", () => {
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
});
