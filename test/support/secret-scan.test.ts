// The one secret scan (src/infra/secret-scan.ts, test/support/secret-scan.ts): it finds its own canary in every
// root on every call and fails when it cannot; it finds a needle in a nested directory, in a binary file and across
// its read chunks; it follows no symlink out of the tree; it fails on a file it cannot read unless told why to skip
// it; and on a box, as root, it reads the whole disk and every process but its own.
import { spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { chmod, chown, mkdir, mkdtemp, readdir, rm, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { Sandbox } from "@vercel/sandbox";
import { afterEach, describe, expect, it } from "vitest";
import { secretScanCommand, secretScanReport } from "../../src/infra/index.js";
import { connect, useEmulator } from "../emulator/harness.js";
import { type SecretScanRequest, scanBox, scanForSecret, scanTree, WHOLE_DISK } from "./secret-scan.js";

const SECRET = `secret-${randomBytes(12).toString("hex")}`;
const dirs: string[] = [];

afterEach(async () => {
  for (const dir of dirs.splice(0)) await rm(dir, { recursive: true, force: true });
});

async function tree(files: Record<string, string | Buffer>): Promise<string> {
  const root = await mkdtemp(path.join(tmpdir(), "secret-scan-"));
  dirs.push(root);
  for (const [name, content] of Object.entries(files)) {
    await mkdir(path.dirname(path.join(root, name)), { recursive: true });
    await writeFile(path.join(root, name), content);
  }
  return root;
}

/**
 * Runs the scan program in a child `node`, with a `--require`d preload if given; its outcome. `unprivileged` runs it,
 * when the spec runs as root, as root without the capabilities that read past file modes (CAP_DAC_OVERRIDE and
 * CAP_DAC_READ_SEARCH, dropped from the bounding set before the exec): a mode-000 file is then unreadable to it, as
 * to anyone, while the clone's own directories (perhaps root's and 0700) stay reachable, as another uid's are not.
 */
function runProgram(request: SecretScanRequest, options: { preload?: string; unprivileged?: boolean } = {}) {
  const { args, env } = secretScanCommand(request);
  const argv = [...(options.preload ? ["--require", options.preload] : []), ...args];
  const [command, commandArgs] =
    options.unprivileged && process.getuid?.() === 0
      ? ["/usr/bin/setpriv", ["--bounding-set=-dac_override,-dac_read_search", "--", process.execPath, ...argv]]
      : [process.execPath, argv];
  return new Promise<ReturnType<typeof secretScanReport>>((resolve, reject) => {
    const child = spawn(command, commandArgs, { env, stdio: ["ignore", "pipe", "pipe"] });
    const [out, err]: [Buffer[], Buffer[]] = [[], []];
    child.stdout.on("data", (c: Buffer) => out.push(c));
    child.stderr.on("data", (c: Buffer) => err.push(c));
    child.once("error", reject);
    child.once("close", (code) => {
      try {
        resolve(secretScanReport(code, Buffer.concat(out).toString(), Buffer.concat(err).toString()));
      } catch (error) {
        reject(error);
      }
    });
  });
}

describe("the secret scan on this machine", () => {
  it("plants, finds and removes a canary in each root, and finds the needle nested deep, in binary, across chunks", async () => {
    // 1 MiB is the scan's read chunk: the needle straddles the first chunk edge.
    const big = Buffer.concat([Buffer.alloc((1 << 20) - 7, "a"), Buffer.from(SECRET), Buffer.alloc(300_000, "b")]);
    const binary = Buffer.concat([Buffer.from([0, 255, 0, 1]), Buffer.from(SECRET), Buffer.from([0, 0, 254])]);
    const a = await tree({
      "state/a/b/c/d/e/deep.json": `{"token":"${SECRET}"}`,
      "logs/big.log": big,
      "tmp/blob.bin": binary,
      "tmp/clean.txt": "nothing here",
      "pack/plugin.tgz": SECRET,
    });
    const b = await tree({ "other/clean.txt": "nothing" });
    const report = await scanTree({ roots: [a, b], needles: { secret: SECRET } });
    expect(report.hits.secret?.map((f) => path.relative(a, f)).sort()).toEqual([
      "logs/big.log",
      "pack/plugin.tgz",
      "state/a/b/c/d/e/deep.json",
      "tmp/blob.bin",
    ]);
    expect(report.filesRead).toBe(6);
    expect(report.canaries.map((f) => path.dirname(f))).toEqual([a, b]);
    for (const file of report.canaries) expect(path.basename(file)).toMatch(/^\.vsb-scan-canary-[0-9a-f]{12}$/);
    // Removed again: the trees hold what they held.
    expect((await readdir(a)).sort()).toEqual(["logs", "pack", "state", "tmp"]);
    expect(await readdir(b)).toEqual(["other"]);
  });

  it("fails when it does not find its own canary (a read that sees nothing proves nothing)", async () => {
    const root = await tree({ "hit.txt": SECRET });
    // A preload that makes every read of a canary file come back empty, as a scan blind to some files would.
    const preload = path.join(root, "..", `blind-${randomBytes(4).toString("hex")}.cjs`);
    dirs.push(preload);
    await writeFile(
      preload,
      `const fs = require("node:fs"); const open = fs.openSync, read = fs.readSync, blind = new Set();
fs.openSync = (f, ...r) => { const fd = open(f, ...r); if (String(f).includes(".vsb-scan-canary-")) blind.add(fd); return fd; };
fs.readSync = (fd, ...r) => (blind.has(fd) ? 0 : read(fd, ...r));`,
    );
    await expect(runProgram({ roots: [root], needles: { secret: SECRET } }, { preload })).rejects.toThrow(
      /did not find its own canary in .*\.vsb-scan-canary-/,
    );
    // The canary is removed even so.
    expect(await readdir(root)).toEqual(["hit.txt"]);
  });

  it("fails on a file it cannot read, and reads past it only when told that exact path and why", async () => {
    const root = await tree({ "ok.txt": "fine", "locked/secret.txt": SECRET });
    await chmod(path.join(root, "locked", "secret.txt"), 0o000);
    const request = { roots: [root], needles: { secret: SECRET } };
    await expect(runProgram(request, { unprivileged: true })).rejects.toThrow(
      /cannot read .*locked\/secret\.txt: EACCES/,
    );
    const told = await runProgram(
      { ...request, skip: [{ path: path.join(root, "locked", "secret.txt"), why: "the spec's locked file" }] },
      { unprivileged: true },
    );
    expect(told.skipped).toEqual([{ path: path.join(root, "locked", "secret.txt"), why: "the spec's locked file" }]);
    expect(told.filesRead).toBe(1);
  });

  it("skips an unreadable entry of the unmapped owner only when told so, with the reason", async () => {
    const root = await tree({ "ok.txt": "fine", "host/file.txt": SECRET });
    await chmod(path.join(root, "host", "file.txt"), 0o000);
    // Owned by another id than the scan's (as the host's files are, seen from a box), unreadable to it.
    const root0 = process.getuid?.() === 0;
    if (root0) await chown(path.join(root, "host", "file.txt"), 65_534, 65_534);
    const why = "the host's own file";
    const request = { roots: [root], needles: { secret: SECRET } };
    await expect(runProgram(request, { unprivileged: true })).rejects.toThrow(/EACCES/);
    const owned = root0 ? 65_534 : (process.getuid?.() ?? 0);
    const told = await runProgram({ ...request, unreadableOwner: { uid: owned, why } }, { unprivileged: true });
    expect(told.skipped).toEqual([{ path: path.join(root, "host", "file.txt"), why }]);
    expect(told.filesRead).toBe(1);
    // Another owner's unreadable file is still an error.
    await expect(
      runProgram({ ...request, unreadableOwner: { uid: owned + 1, why } }, { unprivileged: true }),
    ).rejects.toThrow(/EACCES/);
  });

  it("follows no symlink out of the tree: a link to a file holding the needle is counted, not read", async () => {
    const outside = await tree({ "held.txt": SECRET });
    const root = await tree({ "in.txt": "clean" });
    await symlink(path.join(outside, "held.txt"), path.join(root, "link.txt"));
    await symlink(outside, path.join(root, "linked-dir"));
    const scan = await scanForSecret(root, SECRET);
    expect(scan).toEqual({ matches: [], filesRead: 1, notFiles: 2 });
    // The same file, in the tree, is found.
    expect((await scanForSecret(outside, SECRET)).matches).toEqual(["held.txt"]);
  });

  it("refuses a root that is no directory, a missing root, and a needle too short to mean anything", async () => {
    const root = await tree({ "a.txt": "x" });
    await expect(scanForSecret(path.join(root, "a.txt"), SECRET)).rejects.toThrow(/must be a directory/);
    await expect(scanForSecret(path.join(root, "missing"), SECRET)).rejects.toThrow(/cannot stat root .*ENOENT/);
    await expect(scanForSecret(root, "")).rejects.toThrow(/shorter than 8/);
  });
});

describe("the secret scan on a box", () => {
  const emulator = useEmulator();

  it("reads the whole disk (but the kernel's views and the read-only /usr) and every other process as root, and finds what a process and a file hold", async () => {
    const box = await Sandbox.create(connect(emulator()));
    try {
      const inEnv = `env-${randomBytes(12).toString("hex")}`;
      await box.runCommand({ cmd: "sleep", args: ["120"], env: { HELD: inEnv }, detached: true });
      await box.writeFiles([{ path: "/home/vercel-sandbox/deep/er/note.bin", content: Buffer.from(`\0${SECRET}\0`) }]);
      const report = await scanBox(box, { ...WHOLE_DISK, needles: { secret: SECRET, inEnv }, processes: true });
      expect(report.hits.secret).toEqual(["/home/vercel-sandbox/deep/er/note.bin"]);
      expect(report.hits.inEnv).toEqual([expect.stringMatching(/^\/proc\/\d+\/environ$/)]);
      expect(report.canaries.map((f) => path.dirname(f))).toEqual(["/"]);
      expect(report.skipped.filter((s) => s.path.split("/").length === 2).map((s) => s.path)).toEqual(
        expect.arrayContaining(["/proc", "/dev", "/usr"]),
      );
      // The image's own /etc and home, and what the box wrote.
      expect(report.filesRead).toBeGreaterThan(20);
      expect(report.processesRead).toBeGreaterThan(2);
    } finally {
      await box.delete();
    }
  }, 120_000);
});
