// The harness's children see the run dir's own /tmp (private-tmp.ts): what they write there stays in the run dir
// and never reaches the host's /tmp, every child of one run shares it, and the pid the harness tracks is the
// command's own (the wrapper execs it in place).
import { randomBytes } from "node:crypto";
import { existsSync } from "node:fs";
import { readFile } from "node:fs/promises";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createRunLayout, type RunLayout, removeRunDir } from "./isolation.js";
import { inPrivateTmp, privateTmpApplies, tmpViewOf } from "./private-tmp.js";
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
  const view = tmpViewOf(layout.runDir);
  children = new ChildProcesses(
    (text) => text,
    (command, args) => inPrivateTmp(view, command, args),
  );
});

afterAll(async () => {
  await children?.terminateAll();
  if (layout) await removeRunDir(layout.runDir);
});

describe("a harness child's /tmp", () => {
  it("applies here: the suite runs as root with its run dirs outside /tmp", () => {
    expect(process.getuid?.()).toBe(0);
    expect(privateTmpApplies(layout!.runDir)).toBe(true);
  });

  it("is the run dir's tmp-root: a file written under /tmp/openclaw lands there and not on the host, and a second child reads it", async () => {
    const name = `probe-${randomBytes(6).toString("hex")}`;
    const wrote = await run(`mkdir -p /tmp/openclaw && echo kept > /tmp/openclaw/${name} && echo done`);
    expect(wrote).toMatchObject({ code: 0, stdout: "done\n", stderr: "" });
    expect(existsSync(path.join("/tmp/openclaw", name))).toBe(false);
    expect(await readFile(path.join(tmpViewOf(layout!.runDir), "openclaw", name), "utf8")).toBe("kept\n");
    const read = await run(`cat /tmp/openclaw/${name}`);
    expect(read).toMatchObject({ code: 0, stdout: "kept\n" });
  });

  it("keeps the pid the harness spawned: the command runs as that process, not as a child of a wrapper", async () => {
    const child = children!.spawn("/bin/sh", ["-c", "echo $$; exec /bin/sleep 30"], {
      cwd: layout!.runDir,
      env: { PATH: "/usr/bin:/bin" },
    });
    const said = await new Promise<string>((resolve) =>
      child.stdout!.once("data", (d: Buffer) => resolve(d.toString())),
    );
    expect(Number(said.trim())).toBe(child.pid);
    const cmdline = (await readFile(`/proc/${child.pid}/cmdline`, "utf8")).split("\0");
    expect(cmdline.slice(0, 2)).toEqual(["/bin/sleep", "30"]);
    await children!.terminate(child, 1_000);
  });

  it("does not change the host's mount table: the bind lives only in the child's mount namespace", async () => {
    const inside = await run("cat /proc/self/mountinfo");
    const host = await readFile("/proc/self/mountinfo", "utf8");
    // mountinfo: field 3 is the mount's root within its filesystem, field 4 where it is mounted.
    const bindsOfView = (table: string) =>
      table.split("\n").filter((line) => line.split(" ")[4] === "/tmp" && line.split(" ")[3]?.endsWith("/tmp-root"));
    expect(bindsOfView(inside.stdout)).toHaveLength(1);
    expect(bindsOfView(host)).toEqual([]);
  });
});
