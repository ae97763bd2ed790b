// The emulator's own data dir (its image, sandboxes, snapshots, the route CA's private key) never outlives it: the
// real emulator, bundled from src and run in a child process with a TMPDIR of this test's, removes the dir it
// created on close, on exit, and on SIGTERM/SIGINT (keeping the signal's default unless the process handles it);
// after a SIGKILL the next emulator's start removes it, and only dirs of ours whose owner process is gone.
import { type ChildProcess, spawn } from "node:child_process";
import { mkdir, mkdtemp, readdir, rm, stat, writeFile } from "node:fs/promises";
import net from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DATA_DIR_PREFIX } from "../../src/emulator/data-dir.js";
import { startLocalSandboxApi } from "../../src/emulator/index.js";
import { ownerPidOf } from "../../src/infra/owned-temp-dir.js";
import { REPO_ROOT } from "../gateway/openclaw.js";
import { ChildProcesses } from "../gateway/processes.js";
import { removeAfterwards } from "../setup/remove-afterwards.js";

const processes = new ChildProcesses((text) => text);
let work = "";
let bundle = "";

// The child starts an emulator, says "ready" once it listens, then ends as argv[1] says (argv[2]: the bundle).
const CHILD = `
const { startLocalSandboxApi } = await import(process.argv[2]);
const api = await startLocalSandboxApi();
if (process.argv[1] === "handled") {
  process.once("SIGINT", async () => { await api.close(); process.stdout.write("closed\\n"); process.exit(7); });
}
process.stdout.write("ready\\n");
if (process.argv[1] === "exit") process.exit(0);
setInterval(() => {}, 60_000);
`;

beforeAll(async () => {
  work = await mkdtemp(path.join(tmpdir(), "emu-data-dir-"));
  bundle = path.join(work, "emulator.mjs");
  const esbuild = path.join(REPO_ROOT, "node_modules", ".bin", "esbuild");
  const built = await processes.run(
    esbuild,
    [
      path.join(REPO_ROOT, "src/emulator/index.ts"),
      "--bundle",
      "--platform=node",
      "--format=esm",
      // undici is CommonJS: give the ESM bundle a require for its built-in modules.
      "--banner:js=import { createRequire as __cr } from 'node:module'; const require = __cr(import.meta.url);",
      `--outfile=${bundle}`,
      "--log-level=error",
    ],
    { cwd: REPO_ROOT, env: { PATH: process.env.PATH ?? "" }, timeoutMs: 60_000 },
  );
  expect(built.code, built.stderr).toBe(0);
}, 90_000);

afterAll(async () => {
  await processes.terminateAll();
  if (work) await rm(work, { recursive: true, force: true });
});

/** A fresh TMPDIR for one case, removed when the case ends. */
async function freshTmp(): Promise<string> {
  const dir = await mkdtemp(path.join(work, "tmp-"));
  removeAfterwards(dir);
  return dir;
}

const ourDirs = async (dir: string) => (await readdir(dir)).filter((n) => n.startsWith(DATA_DIR_PREFIX));

/** Starts the emulator child with TMPDIR `tmp`; resolves once it listens (or, for "exit", has exited). */
async function startChild(tmp: string, how: string): Promise<{ child: ChildProcess }> {
  const child = spawn(process.execPath, ["--input-type=module", "-e", CHILD, how, bundle], {
    cwd: REPO_ROOT,
    env: { PATH: process.env.PATH ?? "", TMPDIR: tmp },
    stdio: ["ignore", "pipe", "inherit"],
    detached: true,
  });
  child.stdout!.setEncoding("utf8");
  await new Promise<void>((resolve, reject) => {
    let seen = "";
    child.stdout!.on("data", (chunk: string) => {
      seen += chunk;
      if (seen.includes("ready\n") && how !== "exit") resolve();
    });
    child.once("exit", (code, signal) => {
      if (how === "exit") resolve();
      else reject(new Error(`the emulator child ended early (${code ?? signal})`));
    });
  });
  return { child };
}

function exited(child: ChildProcess): Promise<{ code: number | null; signal: NodeJS.Signals | null }> {
  if (child.exitCode !== null || child.signalCode !== null) {
    return Promise.resolve({ code: child.exitCode, signal: child.signalCode });
  }
  return new Promise((resolve) => child.once("exit", (code, signal) => resolve({ code, signal })));
}

function endChild(child: ChildProcess): void {
  try {
    process.kill(-child.pid!, "SIGKILL");
  } catch {
    // already gone
  }
}

describe("the emulator's own data dir", () => {
  it("is named after its process, and removed on close", async () => {
    const tmp = await freshTmp();
    const { child } = await startChild(tmp, "handled");
    try {
      const [name] = await ourDirs(tmp);
      expect(ownerPidOf(name!, DATA_DIR_PREFIX)).toBe(child.pid);
      expect((await stat(path.join(tmp, name!))).isDirectory()).toBe(true);
      child.kill("SIGINT");
      // The child's own SIGINT handler closes the emulator and exits 7: the signal did not kill it first.
      expect(await exited(child)).toEqual({ code: 7, signal: null });
      expect(await ourDirs(tmp)).toEqual([]);
    } finally {
      endChild(child);
    }
  });

  it("is removed when the process exits without closing it", async () => {
    const tmp = await freshTmp();
    const { child } = await startChild(tmp, "exit");
    expect(await exited(child)).toEqual({ code: 0, signal: null });
    expect(await ourDirs(tmp)).toEqual([]);
  });

  it.each(["SIGTERM", "SIGINT"] as const)(
    "is removed when %s ends the process, which still dies of it",
    async (signal) => {
      const tmp = await freshTmp();
      const { child } = await startChild(tmp, "wait");
      try {
        expect(await ourDirs(tmp)).toHaveLength(1);
        child.kill(signal);
        expect(await exited(child)).toEqual({ code: null, signal });
        expect(await ourDirs(tmp)).toEqual([]);
      } finally {
        endChild(child);
      }
    },
  );

  it("survives a SIGKILL, and the next start removes it, keeping what is not a dead emulator's", async () => {
    const tmp = await freshTmp();
    const { child } = await startChild(tmp, "wait");
    const [killedDir] = await ourDirs(tmp);
    child.kill("SIGKILL");
    expect(await exited(child)).toEqual({ code: null, signal: "SIGKILL" });
    expect(await ourDirs(tmp)).toEqual([killedDir]);
    // A live process's dir, the CLI's token file, a dir of ours without a pid, and someone else's dir stay.
    const live = spawn("sleep", ["60"], { stdio: "ignore" });
    const kept = [
      `${DATA_DIR_PREFIX}${live.pid}-AbCdEf`,
      `${DATA_DIR_PREFIX}4242.token`,
      `${DATA_DIR_PREFIX}AbCdEf`,
      "someone-else-123-AbCdEf",
    ];
    const previous = process.env.TMPDIR;
    try {
      await mkdir(path.join(tmp, kept[0]!));
      await writeFile(path.join(tmp, kept[1]!), "token\n", { mode: 0o600 });
      await mkdir(path.join(tmp, kept[2]!));
      await mkdir(path.join(tmp, kept[3]!));
      process.env.TMPDIR = tmp;
      const api = await startLocalSandboxApi();
      process.env.TMPDIR = previous;
      const mine = `${DATA_DIR_PREFIX}${process.pid}-`;
      const during = (await readdir(tmp)).sort();
      await api.close();
      expect(during.filter((n) => !n.startsWith(mine))).toEqual([...kept].sort());
      expect(during.filter((n) => n.startsWith(mine))).toHaveLength(1);
      expect((await readdir(tmp)).sort()).toEqual([...kept].sort());
    } finally {
      process.env.TMPDIR = previous;
      live.kill("SIGKILL");
      endChild(child);
    }
  });

  it("is removed when the start fails", async () => {
    const tmp = await freshTmp();
    const taken = net.createServer();
    await new Promise<void>((resolve) => taken.listen(0, "127.0.0.1", resolve));
    const previous = process.env.TMPDIR;
    try {
      process.env.TMPDIR = tmp;
      const start = startLocalSandboxApi({ port: (taken.address() as net.AddressInfo).port });
      process.env.TMPDIR = previous;
      await expect(start).rejects.toThrow(/EADDRINUSE/);
      expect(await readdir(tmp)).toEqual([]);
    } finally {
      process.env.TMPDIR = previous;
      await new Promise((resolve) => taken.close(resolve));
    }
  });
});

describe("ownerPidOf", () => {
  it("reads the pid only from names of the prefix's exact shape", () => {
    expect(ownerPidOf(`${DATA_DIR_PREFIX}123-AbC9eF`, DATA_DIR_PREFIX)).toBe(123);
    expect(ownerPidOf(`${DATA_DIR_PREFIX}123.token`, DATA_DIR_PREFIX)).toBeUndefined();
    expect(ownerPidOf(`${DATA_DIR_PREFIX}AbC9eF`, DATA_DIR_PREFIX)).toBeUndefined();
    expect(ownerPidOf(`${DATA_DIR_PREFIX}0-AbC9eF`, DATA_DIR_PREFIX)).toBeUndefined();
    expect(ownerPidOf(`${DATA_DIR_PREFIX}123-AbC9eF/x`, DATA_DIR_PREFIX)).toBeUndefined();
    expect(ownerPidOf("vsb-repo-123-AbC9eF", DATA_DIR_PREFIX)).toBeUndefined();
  });
});
