// Every sandbox maps its ids to a host id range of its own, kept for its life: `vercel-sandbox` of one
// sandbox is never the host user of another's. Inside, nothing changes (root, vercel-sandbox, sudo), and
// a snapshot restored into another sandbox keeps its owners as that sandbox sees them.
import { readdirSync, readFileSync, statSync } from "node:fs";
import { chmod, lchown, link, lstat, mkdir, mkdtemp, rm, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { shiftOwners } from "../../src/emulator/host-tree.js";
import {
  freeIdBase,
  ID_SLOTS,
  IdRangesExhaustedError,
  idBaseOf,
  SANDBOX_ID_BASE,
  SANDBOX_ID_COUNT,
  shiftId,
} from "../../src/emulator/id-ranges.js";
import { connect, SDKS, sh, useEmulator } from "./harness.js";

const emulator = useEmulator();
const { Sandbox } = SDKS[1]![1];
type Box = Awaited<ReturnType<typeof Sandbox.create>>;

let tags = 0;
/** Starts `sleep` in the sandbox as its default user; answers the host pid of that process. */
async function sleeper(sandbox: Box): Promise<number> {
  const tag = `7${process.pid % 1000}${++tags}${Date.now() % 10000}`;
  await sandbox.runCommand({ cmd: "sleep", args: [tag], detached: true });
  for (let i = 0; i < 200; i++) {
    for (const pid of readdirSync("/proc").filter((d) => /^\d+$/.test(d))) {
      try {
        if (readFileSync(`/proc/${pid}/cmdline`, "utf8") === `sleep\0${tag}\0`) return Number(pid);
      } catch {
        // Ended while listing.
      }
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`sleep ${tag} did not start`);
}

/** Real uid and gid on the host of a process. */
function hostIds(pid: number): { uid: number; gid: number } {
  const status = readFileSync(`/proc/${pid}/status`, "utf8");
  const uid = Number(/^Uid:\s+(\d+)/m.exec(status)![1]);
  const gid = Number(/^Gid:\s+(\d+)/m.exec(status)![1]);
  return { uid, gid };
}

describe("id ranges", () => {
  it("are slots of 65536 ids above SANDBOX_ID_BASE; the first free one from the emulator's start is handed out", () => {
    expect(idBaseOf(0)).toBe(SANDBOX_ID_BASE);
    expect(idBaseOf(3)).toBe(SANDBOX_ID_BASE + 3 * SANDBOX_ID_COUNT);
    expect(freeIdBase([])).toBe(idBaseOf(0));
    expect(freeIdBase([idBaseOf(0), idBaseOf(2)])).toBe(idBaseOf(1));
    expect(freeIdBase([idBaseOf(7)], 7)).toBe(idBaseOf(8));
    expect(freeIdBase([idBaseOf(ID_SLOTS - 1)], ID_SLOTS - 1)).toBe(idBaseOf(0));
    expect(idBaseOf(ID_SLOTS - 1) + SANDBOX_ID_COUNT - 1).toBeLessThanOrEqual(0xffff_fffe);
    expect(() => freeIdBase(Array.from({ length: ID_SLOTS }, (_, slot) => idBaseOf(slot)))).toThrow(
      IdRangesExhaustedError,
    );
    expect(shiftId(idBaseOf(1) + 1000, idBaseOf(1), idBaseOf(4))).toBe(idBaseOf(4) + 1000);
    expect(shiftId(0, idBaseOf(1), idBaseOf(4))).toBe(0);
    expect(shiftId(idBaseOf(2), idBaseOf(1), idBaseOf(4))).toBe(idBaseOf(2));
  });

  it("shifting a copied layer changes owners of its own range only, keeps set-user-ID bits and never follows a link", async () => {
    const dir = await mkdtemp(path.join(tmpdir(), "owner-shift-"));
    const outside = await mkdtemp(path.join(tmpdir(), "owner-shift-outside-"));
    try {
      const [from, to] = [idBaseOf(5), idBaseOf(9)];
      const layer = path.join(dir, "upper");
      await mkdir(path.join(layer, "home"), { recursive: true });
      await writeFile(path.join(layer, "home/file"), "x");
      await writeFile(path.join(layer, "suid"), "x");
      await writeFile(path.join(outside, "target"), "host file");
      await symlink(path.join(outside, "target"), path.join(layer, "home/link"));
      await symlink(outside, path.join(layer, "dir-link"));
      await link(path.join(layer, "home/file"), path.join(layer, "hard"));
      await writeFile(path.join(layer, "host-root"), "x");
      await lchown(layer, from, from);
      await lchown(path.join(layer, "home"), from + 1000, from + 1000);
      await lchown(path.join(layer, "home/file"), from + 1000, from + 10);
      await lchown(path.join(layer, "suid"), from, from);
      await chmod(path.join(layer, "suid"), 0o4755);
      await lchown(path.join(layer, "home/link"), from + 1000, from + 1000);
      await lchown(path.join(layer, "dir-link"), from + 1000, from + 1000);
      const hostBefore = [await lstat(path.join(outside, "target")), await lstat(outside)];

      await shiftOwners(layer, from, to);

      const owner = async (p: string) => {
        const s = await lstat(path.join(layer, p));
        return [s.uid, s.gid, (s.mode & 0o7777).toString(8)];
      };
      expect(await owner(".")).toEqual([to, to, "755"]);
      expect(await owner("home")).toEqual([to + 1000, to + 1000, "755"]);
      expect(await owner("home/file")).toEqual([to + 1000, to + 10, "644"]);
      expect(await owner("hard")).toEqual([to + 1000, to + 10, "644"]);
      expect(await owner("suid")).toEqual([to, to, "4755"]);
      expect((await owner("home/link")).slice(0, 2)).toEqual([to + 1000, to + 1000]);
      expect((await owner("dir-link")).slice(0, 2)).toEqual([to + 1000, to + 1000]);
      expect(await owner("host-root")).toEqual([0, 0, "644"]);
      const hostAfter = [await lstat(path.join(outside, "target")), await lstat(outside)];
      expect(hostAfter.map((s) => [s.uid, s.gid, s.mode, s.ctimeMs])).toEqual(
        hostBefore.map((s) => [s.uid, s.gid, s.mode, s.ctimeMs]),
      );
    } finally {
      await rm(dir, { recursive: true, force: true });
      await rm(outside, { recursive: true, force: true });
    }
  });

  it("two sandboxes run as different host ids, and inside each root and vercel-sandbox are as before", async () => {
    const a = await Sandbox.create(connect(emulator()));
    const b = await Sandbox.create(connect(emulator()));
    const [idsA, idsB] = [hostIds(await sleeper(a)), hostIds(await sleeper(b))];
    expect(idsA.uid).not.toBe(idsB.uid);
    for (const ids of [idsA, idsB]) {
      const base = ids.uid - 1000;
      expect(base).toBeGreaterThanOrEqual(SANDBOX_ID_BASE);
      expect((base - SANDBOX_ID_BASE) % SANDBOX_ID_COUNT).toBe(0);
      expect(ids.gid).toBe(base + 1000);
    }
    for (const sandbox of [a, b]) {
      expect(
        (await sh(sandbox, "id -un; sudo id -un; stat -c '%U:%G' / /etc/passwd /root ~ /vercel/sandbox")).out,
      ).toBe(
        "vercel-sandbox\nroot\nroot:root\nroot:root\nroot:root\nvercel-sandbox:vercel-sandbox\nvercel-sandbox:vercel-sandbox\n",
      );
    }
    await a.delete();
    await b.delete();
  });

  it("a sandbox keeps its range across stop and resume, and its range is free again once it is deleted", async () => {
    const a = await Sandbox.create(connect(emulator()));
    const before = hostIds(await sleeper(a));
    await a.stop();
    // Created while `a` is stopped: it must not be given `a`'s range.
    const b = await Sandbox.create(connect(emulator()));
    const idsB = hostIds(await sleeper(b));
    expect(idsB.uid).not.toBe(before.uid);
    expect(hostIds(await sleeper(a))).toEqual(before);
    await a.delete();
    const c = await Sandbox.create(connect(emulator()));
    expect(hostIds(await sleeper(c))).toEqual(before);
    await b.delete();
    await c.delete();
  });

  it("a snapshot restored as another sandbox keeps its owners inside and takes that sandbox's host ids", async () => {
    const a = await Sandbox.create(connect(emulator()));
    const made = await sh(
      a,
      "echo mine > ~/mine.txt && ln -s mine.txt ~/link && sudo install -m 4755 /bin/true /opt/root-suid && sudo sh -c 'echo r > /etc/root-owned'",
    );
    expect(made.code).toBe(0);
    const snapshot = await a.snapshot();
    // `a` still exists (stopped), so the restored sandbox has a range of its own.
    const b = await Sandbox.create({
      ...connect(emulator()),
      source: { type: "snapshot", snapshotId: snapshot.snapshotId },
    });
    const stat = "stat -c '%U:%G %a %n' ~/mine.txt /opt/root-suid /etc/root-owned; stat -c '%U:%G %n' ~/link";
    expect((await sh(b, stat)).out).toBe(
      [
        "vercel-sandbox:vercel-sandbox 644 /home/vercel-sandbox/mine.txt",
        "root:root 4755 /opt/root-suid",
        "root:root 644 /etc/root-owned",
        "vercel-sandbox:vercel-sandbox /home/vercel-sandbox/link",
        "",
      ].join("\n"),
    );
    expect((await sh(b, "sudo id -u; cat ~/mine.txt")).out).toBe("0\nmine\n");
    // On the host, the restored file belongs to B's vercel-sandbox, i.e. the host ids B's processes run as.
    const pidB = await sleeper(b);
    const idsB = hostIds(pidB);
    const file = statSync(`/proc/${pidB}/root/home/vercel-sandbox/mine.txt`);
    expect([file.uid, file.gid]).toEqual([idsB.uid, idsB.gid]);
    const idsA = hostIds(await sleeper(a));
    expect(idsB.uid).not.toBe(idsA.uid);
    await b.delete();
    await a.delete({ deleteOrphanSnapshots: true });
  });

  it("a fork of a sandbox without a snapshot keeps its owners inside and runs as the fork's own host ids", async () => {
    const source = await Sandbox.create(connect(emulator()));
    expect((await sh(source, "echo mine > ~/mine.txt && sudo sh -c 'echo r > /etc/root-owned'")).code).toBe(0);
    // Its files as its stop left them (a persistent sandbox's fork starts there).
    await source.stop();
    const fork = await Sandbox.fork({ ...connect(emulator()), sourceSandbox: source.name });
    expect((await sh(fork, "stat -c '%U:%G %n' ~/mine.txt /etc/root-owned; echo x >> ~/mine.txt")).out).toBe(
      "vercel-sandbox:vercel-sandbox /home/vercel-sandbox/mine.txt\nroot:root /etc/root-owned\n",
    );
    const pid = await sleeper(fork);
    const file = statSync(`/proc/${pid}/root/home/vercel-sandbox/mine.txt`);
    expect([file.uid, file.gid]).toEqual([hostIds(pid).uid, hostIds(pid).gid]);
    expect(hostIds(pid).uid).not.toBe(hostIds(await sleeper(source)).uid);
    await fork.delete();
    await source.delete();
  });
});
