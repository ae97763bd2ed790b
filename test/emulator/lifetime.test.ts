// Sandbox processes never outlive what started them: a killed command takes its process tree, a killed
// emulator takes every sandbox, and a command's output never grows the emulator past its bound.
import { type ChildProcess, spawn } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import { describe, expect, it } from "vitest";
import { OUTPUT_RETAIN_CHARS } from "../../src/emulator/executor.js";
import { HolderFactory } from "../../src/emulator/holder-zygote.js";
import { SANDBOX_ID_BASE } from "../../src/emulator/id-ranges.js";
import { ensureSandboxImage } from "../../src/emulator/image.js";
import { prepareLayers, startHolder } from "../../src/emulator/isolation.js";
import { REPO_ROOT } from "../gateway/openclaw.js";
import { ensureBuilt } from "../setup/build.js";
import { connect, SDKS, useEmulator } from "./harness.js";

const emulator = useEmulator();
const { Sandbox } = SDKS[1]![1];

/** Host PIDs whose whole command line is `needle` (argv joined by spaces); fails when /proc cannot be listed. */
function pidsWith(needle: string): number[] {
  const pids = readdirSync("/proc").filter((d) => /^\d+$/.test(d));
  expect(pids.length).toBeGreaterThan(0);
  return pids
    .filter((pid) => {
      try {
        return readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0").join(" ").trim() === needle;
      } catch {
        return false; // ended while listing
      }
    })
    .map(Number);
}

async function until(check: () => boolean, what: string): Promise<void> {
  for (let i = 0; i < 200; i++) {
    if (check()) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`timed out waiting for ${what}`);
}

describe("process lifetime", () => {
  it("kill ends the command's whole process tree", async () => {
    const sandbox = await Sandbox.create(connect(emulator()));
    const tag = `${Date.now() % 100000}1`;
    const command = await sandbox.runCommand({
      cmd: "bash",
      args: ["-c", `sleep 3${tag} & (sleep 4${tag} & wait) & wait`],
      detached: true,
    });
    await until(() => pidsWith(`sleep 3${tag}`).length + pidsWith(`sleep 4${tag}`).length === 2, "the tree to start");
    await command.kill("SIGTERM");
    expect((await command.wait()).exitCode).toBe(143);
    await until(() => pidsWith(`sleep 3${tag}`).length + pidsWith(`sleep 4${tag}`).length === 0, "the tree to end");
    await sandbox.delete();
  });

  it("a sandbox that is not ready in time fails its boot and leaves no process behind", async () => {
    const dataDir = await mkdtemp(path.join(tmpdir(), "emu-boot-"));
    const dir = path.join(dataDir, "sandboxes", "slow");
    try {
      await prepareLayers(dir, SANDBOX_ID_BASE);
      const image = await ensureSandboxImage(dataDir, SANDBOX_ID_BASE);
      const started: ChildProcess[] = [];
      const factory = new HolderFactory((c) => started.push(c));
      const error = await startHolder(factory, dir, dataDir, image, 1).catch((e: Error) => e);
      expect(error).toBeInstanceOf(Error);
      expect((error as Error).message).toMatch(/did not start within 1 ms/);
      // The one process started is the holders' factory, which stays for the next boot; the holder it forked
      // (and everything that holder started) is gone.
      expect(started).toHaveLength(1);
      const pid = started[0]!.pid!;
      expect(alive(pid)).toBe(true);
      await until(
        () =>
          readdirSync("/proc")
            .filter((p) => /^\d+$/.test(p) && Number(p) !== pid)
            .filter((p) => isDescendant(Number(p), pid)).length === 0,
        "the holder to end",
      );
      started[0]!.kill("SIGKILL");
      await until(() => !alive(pid), "the factory to end");
    } finally {
      await rm(dataDir, { recursive: true, force: true });
    }
  });

  it("an emulator killed with SIGKILL takes every sandbox process with it", async () => {
    await ensureBuilt();
    const tag = `9${Date.now() % 1000000}`;
    // A killed emulator cannot remove its temp data: the test gives it a data dir and removes that.
    const dataDir = await mkdtemp(path.join(tmpdir(), "emu-killed-"));
    const script = `
      const { startLocalSandboxApi } = await import(${JSON.stringify(path.join(REPO_ROOT, "dist/emulator/index.js"))});
      const { Sandbox } = await import("@vercel/sandbox");
      const api = await startLocalSandboxApi({ dataDir: ${JSON.stringify(dataDir)} });
      const sandbox = await Sandbox.create({ ...api.credentials, fetch: api.fetch });
      await sandbox.runCommand({ cmd: "sleep", args: ["${tag}"], detached: true });
      process.send("ready");`;
    const child = spawn(process.execPath, ["--input-type=module", "-e", script], {
      cwd: REPO_ROOT,
      stdio: ["ignore", "inherit", "inherit", "ipc"],
    });
    try {
      await new Promise<void>((resolve, reject) => {
        child.once("message", () => resolve());
        child.once("exit", (code) => reject(new Error(`the emulator process exited early (${code})`)));
      });
      await until(() => pidsWith(`sleep ${tag}`).length === 1, "the sandbox command");
      // The holder's shell starts its `sleep infinity` once it is PID 1; a command may be running before that.
      const holderSleeps = () => pidsWith("/bin/sleep infinity").filter((pid) => isDescendant(pid, child.pid!));
      await until(() => holderSleeps().length > 0, "the holder's sleep");
      const holders = holderSleeps();
      expect(holders.length).toBeGreaterThan(0);
      child.kill("SIGKILL");
      await until(() => pidsWith(`sleep ${tag}`).length === 0, "the sandbox command to end");
      await until(() => holders.every((pid) => !alive(pid)), "the holders to end");
    } finally {
      child.kill("SIGKILL");
      await rm(dataDir, { recursive: true, force: true });
    }
  }, 300_000); // ensureBuilt may rebuild the package first (about a minute on a loaded machine)

  it("a command printing 1 GiB keeps the emulator's memory within the replay bound, and logs say what was dropped", async () => {
    const sandbox = await Sandbox.create(connect(emulator()));
    const gc = collector();
    gc();
    const heapBefore = process.memoryUsage().heapUsed;
    const rssBefore = process.memoryUsage().rss;
    let rssPeak = rssBefore;
    const sampler = setInterval(() => {
      rssPeak = Math.max(rssPeak, process.memoryUsage().rss);
    }, 20);
    try {
      const command = await sandbox.runCommand({
        cmd: "bash",
        args: ["-c", "head -c 1073741824 /dev/zero | tr '\\0' x; echo; echo the-end"],
        detached: true,
      });
      expect((await command.wait()).exitCode).toBe(0);
      gc();
      // What stays is the replay log: OUTPUT_RETAIN_CHARS characters (2 bytes each at most), plus slack.
      expect(process.memoryUsage().heapUsed - heapBefore).toBeLessThan(OUTPUT_RETAIN_CHARS * 2 + 32 * 1024 * 1024);
      // Keeping the whole output would take 1-2 GiB; the peak stays far below it.
      expect(rssPeak - rssBefore).toBeLessThan(640 * 1024 * 1024);
      const logs = await command.stdout();
      expect(logs.length).toBeLessThanOrEqual(OUTPUT_RETAIN_CHARS + 64 * 1024);
      expect(logs.endsWith("the-end\n")).toBe(true);
      expect(await command.stderr()).toMatch(/^\[emulator: \d+ characters of earlier output dropped/);
    } finally {
      clearInterval(sampler);
    }
    await sandbox.delete();
  }, 180_000);
});

/** V8's collector, exposed at run time, so heap figures are live objects rather than garbage. */
function collector(): () => void {
  setFlagsFromString("--expose-gc");
  return runInNewContext("gc") as () => void;
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

function isDescendant(pid: number, ancestor: number): boolean {
  let current = pid;
  for (let i = 0; i < 32 && current > 1; i++) {
    if (current === ancestor) return true;
    try {
      current = Number(
        readFileSync(`/proc/${current}/stat`, "utf8")
          .replace(/^.*\) /, "")
          .split(" ")[1],
      );
    } catch {
      return false;
    }
  }
  return false;
}
