// The emulator walks and copies trees a sandbox may have written (a drive it mounted read-write, an upper layer)
// on the host, as host root. Here the test plays the sandbox: a process on the host renames links over the tree's
// entries while the walk runs, as a sandbox holding the tree read-write could. Neither walk may ever act on what a
// link names: a host file keeps its owner, mode and content, and a host directory's files never reach a copy.
import { type ChildProcess, spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { chmod, chown, lstat, mkdir, mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { copyTree, shiftOwners } from "../../src/emulator/host-tree.js";
import { idBaseOf } from "../../src/emulator/id-ranges.js";

const FILES = 400;
/** How long each race runs: the path walks these specs replaced lost it within 1 to 3.5 s on a loaded 2-core host. */
const RACE_MS = 10_000;
let attacker: ChildProcess | undefined;
let dir: string | undefined;

afterEach(async () => {
  if (attacker && attacker.exitCode === null && attacker.signalCode === null) {
    const gone = new Promise((resolve) => attacker?.once("close", resolve));
    attacker.kill("SIGKILL");
    await gone;
  }
  attacker = undefined;
  if (dir) await rm(dir, { recursive: true, force: true });
  dir = undefined;
});

/** Starts `script` (python3) on the host with `args`; it runs until the test kills it. */
function startAttacker(script: string, args: string[]): ChildProcess {
  const child = spawn("/usr/bin/python3", ["-I", "-S", "-c", script, ...args], { stdio: ["ignore", "ignore", "pipe"] });
  child.stderr?.resume();
  return child;
}

// Swaps each setuid file of the tree for a link to the victim and back, forever: a path walk that lchowns and
// then chmods by name meets a link at the chmod now and then.
const SWAP_FILES = `import os, sys
tree, victim, uid = sys.argv[1], sys.argv[2], int(sys.argv[3])
names = sorted(n for n in os.listdir(tree) if n.startswith("f"))
while True:
    for n in names:
        p, tmp = os.path.join(tree, n), os.path.join(tree, "t" + n)
        try:
            os.symlink(victim, tmp)
            os.rename(tmp, p)
            with open(tmp, "w") as f:
                f.write("x")
            os.chown(tmp, uid, uid)
            os.chmod(tmp, 0o4644)
            os.rename(tmp, p)
        except OSError:
            pass
`;

// Swaps directory d for a link to the secret directory and back, forever: a copy by path that listed d's names
// then opens d/planted.txt by path reads the secret's file when the link is there.
const SWAP_DIR = `import os, sys
tree, secret = sys.argv[1], sys.argv[2]
d, real, link = (os.path.join(tree, n) for n in ("d", "d.real", "d.link"))
while True:
    try:
        os.rename(d, real)
        os.symlink(secret, link)
        os.rename(link, d)
        os.unlink(d)
        os.rename(real, d)
    except OSError:
        pass
`;

/** A root-owned 0700 directory of the test's own with a file in it the walks must never touch nor copy. */
async function hostSecret(root: string): Promise<{ secretDir: string; victim: string; secret: string }> {
  const secretDir = path.join(root, "host-only");
  await mkdir(secretDir, { mode: 0o700 });
  await chown(secretDir, 0, 0);
  const secret = `secret-${randomBytes(12).toString("hex")}`;
  const victim = path.join(secretDir, "planted.txt");
  await writeFile(victim, `${secret}\n`, { mode: 0o600 });
  await chown(victim, 0, 0);
  await chmod(victim, 0o600);
  return { secretDir, victim, secret };
}

/** Every file's bytes under `root`, links not followed. */
async function allBytes(root: string): Promise<string> {
  let out = "";
  for (const entry of await readdir(root, { withFileTypes: true, recursive: true })) {
    if (entry.isFile()) out += await readFile(path.join(entry.parentPath, entry.name), "latin1");
  }
  return out;
}

describe("host-side walks over a tree a sandbox is writing", () => {
  it("the owner shift never changes the owner or mode of a file a link renamed over the tree names", async () => {
    dir = await mkdtemp(path.join(tmpdir(), "host-tree-race-"));
    const { victim, secret } = await hostSecret(dir);
    const before = await lstat(victim);
    const tree = path.join(dir, "tree");
    await mkdir(tree, { mode: 0o777 });
    const [from, to] = [idBaseOf(11), idBaseOf(12)];
    for (let i = 0; i < FILES; i++) {
      const f = path.join(tree, `f${i}`);
      await writeFile(f, "x");
      await chown(f, from, from);
      await chmod(f, 0o4644);
    }
    attacker = startAttacker(SWAP_FILES, [tree, victim, String(from)]);
    const deadline = Date.now() + RACE_MS;
    for (let round = 0; Date.now() < deadline; round++) {
      // Even rounds shift from `from` to `to`, odd ones back: each round finds files to move.
      await shiftOwners(tree, round % 2 ? to : from, round % 2 ? from : to).catch(() => undefined);
      const now = await lstat(victim);
      expect([now.uid, now.gid, (now.mode & 0o7777).toString(8)]).toEqual([
        before.uid,
        before.gid,
        (before.mode & 0o7777).toString(8),
      ]);
    }
    expect(await readFile(victim, "utf8")).toBe(`${secret}\n`);
  }, 60_000);

  it("a copy never holds a file of the directory a link swapped in for one of the tree's directories", async () => {
    dir = await mkdtemp(path.join(tmpdir(), "host-tree-race-"));
    const { secretDir, secret } = await hostSecret(dir);
    await chmod(path.join(secretDir, "planted.txt"), 0o644);
    const tree = path.join(dir, "tree");
    await mkdir(path.join(tree, "d"), { recursive: true });
    // The tree's own d/planted.txt, named like the secret's file, comes last in d: a copy by path opens it by
    // name after it has copied every other file of d.
    for (let i = 0; i < FILES; i++) await writeFile(path.join(tree, "d", `a${i}`), "decoy");
    await writeFile(path.join(tree, "d", "planted.txt"), "the tree's own\n");
    attacker = startAttacker(SWAP_DIR, [tree, secretDir]);
    const deadline = Date.now() + RACE_MS;
    for (let round = 0; Date.now() < deadline; round++) {
      const copy = path.join(dir, `copy-${round}`);
      await copyTree(tree, copy).catch(() => undefined);
      const copied = await allBytes(copy).catch(() => "");
      await rm(copy, { recursive: true, force: true });
      expect(copied).not.toContain(secret);
    }
  }, 60_000);
});
