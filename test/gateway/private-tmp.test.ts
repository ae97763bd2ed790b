// The harness's children see the run dir's own /tmp/openclaw and lock-coordinator dir (private-tmp.ts): what they
// write there stays in the run dir and never reaches the host's, every child of one run shares it, the rest of
// /tmp is the host's as before, and the pid the harness tracks is the command's own (the wrapper execs in place).
import { randomBytes } from "node:crypto";
import { existsSync } from "node:fs";
import { readFile, rm, writeFile } from "node:fs/promises";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createRunLayout, type RunLayout, removeRunDir } from "./isolation.js";
import { inPrivateTmp, openclawTmpPaths, privateTmpApplies, viewPaths } from "./private-tmp.js";
import { ChildProcesses } from "./processes.js";

let layout: RunLayout | undefined;
let children: ChildProcesses | undefined;

function run(script: string) {
  if (!layout || !children) throw new Error("not set up (see beforeAll)");
  return children.run("/bin/sh", ["-c", script], {
    cwd: layout.runDir,
    env: { PATH: "/usr/bin:/bin" },
    timeoutMs: 30_000,
  });
}

beforeAll(async () => {
  layout = await createRunLayout();
  const runDir = layout.runDir;
  children = new ChildProcesses(
    (text) => text,
    (command, args) => inPrivateTmp(runDir, command, args),
  );
});

afterAll(async () => {
  await children?.terminateAll();
  if (layout) await removeRunDir(layout.runDir);
});

describe("a harness child's /tmp/openclaw and lock dir", () => {
  it("apply here: the suite runs as root, and both host paths are directories", () => {
    expect(process.getuid?.()).toBe(0);
    expect(privateTmpApplies()).toBe(true);
  });

  it("are the run dir's own: files written there land in the run and not on the host, and a second child reads them", async () => {
    const name = `probe-${randomBytes(6).toString("hex")}`;
    const host = openclawTmpPaths();
    const wrote = await run(`echo kept > /tmp/openclaw/${name} && echo lock > ${host.locks}/${name} && echo done`);
    expect(wrote).toMatchObject({ code: 0, stdout: "done\n", stderr: "" });
    expect(existsSync(path.join(host.openclaw, name))).toBe(false);
    expect(existsSync(path.join(host.locks, name))).toBe(false);
    const view = viewPaths(layout!.runDir);
    expect(await readFile(path.join(view.openclaw, name), "utf8")).toBe("kept\n");
    expect(await readFile(path.join(view.locks, name), "utf8")).toBe("lock\n");
    const read = await run(`cat /tmp/openclaw/${name} ${host.locks}/${name}`);
    expect(read).toMatchObject({ code: 0, stdout: "kept\nlock\n" });
  });

  it("leave the rest of /tmp as the host has it: a child reads a file the host put there", async () => {
    const file = path.join("/tmp", `vsb-private-tmp-${randomBytes(6).toString("hex")}`);
    await writeFile(file, "host\n");
    try {
      expect(await run(`cat ${file}`)).toMatchObject({ code: 0, stdout: "host\n" });
    } finally {
      await rm(file, { force: true });
    }
  });

  it("keep the pid the harness spawned: the command runs as that process, not as a child of a wrapper", async () => {
    const child = children!.spawn("/bin/sh", ["-c", "echo $$; exec /bin/sleep 30"], {
      cwd: layout!.runDir,
      env: { PATH: "/usr/bin:/bin" },
    });
    const said = await new Promise<string>((resolve) =>
      child.stdout!.once("data", (d: Buffer) => resolve(d.toString())),
    );
    expect(Number(said.trim())).toBe(child.pid);
    // The shell prints its pid, then execs sleep in the same process: read the command line once it has.
    let cmdline: string[] = [];
    for (let i = 0; i < 100 && cmdline[0] !== "/bin/sleep"; i++) {
      cmdline = (await readFile(`/proc/${child.pid}/cmdline`, "utf8")).split("\0");
      if (cmdline[0] !== "/bin/sleep") await new Promise((r) => setTimeout(r, 20));
    }
    expect(cmdline.slice(0, 2)).toEqual(["/bin/sleep", "30"]);
    await children!.terminate(child, 1_000);
  });

  it("do not change the host's mount table: the binds live only in the child's mount namespace", async () => {
    const inside = await run("cat /proc/self/mountinfo");
    const host = await readFile("/proc/self/mountinfo", "utf8");
    // mountinfo: field 3 is the mount's root within its filesystem, field 4 where it is mounted.
    const binds = (table: string) =>
      table
        .split("\n")
        .map((line) => line.split(" "))
        .filter((f) => f[4] === "/tmp/openclaw" || f[4] === openclawTmpPaths().locks)
        .filter((f) => f[3]?.includes("/tmp-root/"));
    expect(binds(inside.stdout)).toHaveLength(2);
    expect(binds(host)).toEqual([]);
  });
});
