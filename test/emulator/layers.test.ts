// Layered snapshots (src/emulator/layers.ts): a snapshot freezes the sandbox's upper layer by moving it, a
// sandbox from a snapshot stands on the frozen chain (idmapped into its own id range) under a fresh upper
// layer, and a deleted snapshot's layer stays while anything stands on it. The emulator has its own data
// dir here so the specs can look at the layers on the host.
import { existsSync } from "node:fs";
import { mkdtemp, readdir, readFile, rm, stat } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type LocalSandboxApi, startLocalSandboxApi } from "../../src/emulator/index.js";
import { MAX_LAYERS } from "../../src/emulator/layers.js";
import { connect, SDKS, sh } from "./harness.js";

let api: LocalSandboxApi;
let dataDir: string;
beforeAll(async () => {
  dataDir = await mkdtemp(path.join(tmpdir(), "emu-layers-"));
  api = await startLocalSandboxApi({ dataDir });
});
afterAll(async () => {
  await api?.close();
  await rm(dataDir, { recursive: true, force: true });
});

/** The host directory of a sandbox's own upper layer. */
async function upperOf(name: string): Promise<string> {
  const dirs = (await readdir(path.join(dataDir, "sandboxes"))).filter((d) => d === name || d.startsWith(`${name}~`));
  expect(dirs).toHaveLength(1);
  return path.join(dataDir, "sandboxes", dirs[0]!, "fs", "upper");
}

const frozen = (snapshotId: string) => path.join(dataDir, "snapshots", snapshotId, "fs", "upper");
const SANDBOX_FILE = "vercel/sandbox";

describe.each(SDKS)("layered snapshots with SDK %s", (_version, { Sandbox, Snapshot }) => {
  it("a snapshot moves the sandbox's upper layer into the snapshot: the file is the same inode, no copy", async () => {
    const source = await Sandbox.create(connect(api));
    expect((await sh(source, "dd if=/dev/zero of=/vercel/sandbox/big bs=1M count=8 status=none")).code).toBe(0);
    const before = await stat(path.join(await upperOf(source.name), SANDBOX_FILE, "big"));
    const snapshot = await source.snapshot();
    const after = await stat(path.join(frozen(snapshot.snapshotId), SANDBOX_FILE, "big"));
    expect(after.ino).toBe(before.ino);
    expect(after.uid).toBe(before.uid);
    // The source goes on over the frozen layer, under a fresh upper layer of its own.
    expect(existsSync(path.join(await upperOf(source.name), SANDBOX_FILE, "big"))).toBe(false);
    const again = await sh(source, "stat -c %s /vercel/sandbox/big");
    expect(again.out.trim()).toBe(String(8 * 1024 * 1024));
    await source.delete();
    await snapshot.delete();
  });

  it("sandboxes from a snapshot see its files with their own owners; writes reach neither the snapshot nor a sibling", async () => {
    const source = await Sandbox.create(connect(api));
    await source.writeFiles([{ path: "mine.txt", content: Buffer.from("original") }]);
    expect((await sh(source, "echo root > /vercel/sandbox/root.txt", true)).code).toBe(0);
    const snapshot = await source.snapshot();
    const a = await Sandbox.create({ ...connect(api), source: { type: "snapshot", snapshotId: snapshot.snapshotId } });
    const b = await Sandbox.create({ ...connect(api), source: { type: "snapshot", snapshotId: snapshot.snapshotId } });
    const owners = "stat -c '%n %u:%g' /vercel/sandbox/mine.txt /vercel/sandbox/root.txt";
    for (const box of [a, b]) {
      expect((await sh(box, owners)).out).toBe("/vercel/sandbox/mine.txt 1000:1000\n/vercel/sandbox/root.txt 0:0\n");
    }
    // The default user owns its file in `a` too, so it may change it; root's file stays root's.
    expect((await sh(a, "echo changed > /vercel/sandbox/mine.txt && rm /vercel/sandbox/root.txt", true)).code).toBe(0);
    expect((await sh(a, "echo again >> /vercel/sandbox/mine.txt")).code).toBe(0);
    expect((await sh(b, "echo nope > /vercel/sandbox/root.txt")).code).not.toBe(0);
    expect((await sh(a, "cat /vercel/sandbox/mine.txt; ls /vercel/sandbox")).out).toBe("changed\nagain\nmine.txt\n");
    expect((await sh(b, "cat /vercel/sandbox/mine.txt /vercel/sandbox/root.txt")).out).toBe("originalroot\n");
    expect(await readFile(path.join(frozen(snapshot.snapshotId), SANDBOX_FILE, "mine.txt"), "utf8")).toBe("original");
    // The file endpoints see the same merged view: a frozen file reads, and a write lands in the sandbox's own layer.
    expect((await b.readFileToBuffer({ path: "mine.txt" }))?.toString()).toBe("original");
    await b.writeFiles([{ path: "mine.txt", content: Buffer.from("b's own") }]);
    expect((await b.readFileToBuffer({ path: "mine.txt" }))?.toString()).toBe("b's own");
    expect((await a.readFileToBuffer({ path: "mine.txt" }))?.toString()).toBe("changed\nagain\n");
    // On the host, `a`'s copy is owned in `a`'s own range, never the source's or `b`'s.
    const [rootA, rootB, rootSource] = await Promise.all(
      [a, b, source].map(async (s) => (await stat(await upperOf(s.name))).uid),
    );
    expect(new Set([rootA, rootB, rootSource]).size).toBe(3);
    expect((await stat(path.join(await upperOf(a.name), SANDBOX_FILE, "mine.txt"))).uid).toBe(rootA! + 1000);
    for (const box of [a, b, source]) await box.delete();
    await snapshot.delete();
  });

  it("a deleted snapshot's layer stays while a sandbox stands on it, and goes with the last one", async () => {
    const source = await Sandbox.create(connect(api));
    await source.writeFiles([{ path: "kept.txt", content: Buffer.from("kept") }]);
    const snapshot = await source.snapshot();
    await source.delete();
    const user = await Sandbox.create({
      ...connect(api),
      source: { type: "snapshot", snapshotId: snapshot.snapshotId },
    });
    await snapshot.delete();
    expect((await Snapshot.get({ ...connect(api), snapshotId: snapshot.snapshotId })).status).toBe("deleted");
    await user.stop();
    expect((await sh(user, "cat /vercel/sandbox/kept.txt")).out).toBe("kept");
    expect(existsSync(frozen(snapshot.snapshotId))).toBe(true);
    // Its stop's snapshot stands on the chain too, until deleted with it.
    await user.delete({ deleteOrphanSnapshots: true });
    expect(existsSync(path.join(dataDir, "snapshots", snapshot.snapshotId))).toBe(false);
  });

  it("a snapshot of a sandbox from a snapshot stacks on its chain, which outlives the first snapshot", async () => {
    const first = await Sandbox.create(connect(api));
    await first.writeFiles([
      { path: "one.txt", content: Buffer.from("one") },
      { path: "gone.txt", content: Buffer.from("gone") },
    ]);
    const s1 = await first.snapshot();
    const middle = await Sandbox.create({ ...connect(api), source: { type: "snapshot", snapshotId: s1.snapshotId } });
    await middle.writeFiles([{ path: "two.txt", content: Buffer.from("two") }]);
    expect((await sh(middle, "rm /vercel/sandbox/gone.txt && echo 1b >> /vercel/sandbox/one.txt")).code).toBe(0);
    const s2 = await middle.snapshot();
    // The middle sandbox resumes over its own frozen layer (its range) on the first one (another range).
    expect((await sh(middle, "cat /vercel/sandbox/one.txt /vercel/sandbox/two.txt")).out).toBe("one1b\ntwo");
    await s1.delete();
    await first.delete();
    const last = await Sandbox.create({ ...connect(api), source: { type: "snapshot", snapshotId: s2.snapshotId } });
    await last.stop();
    const seen = await sh(last, "cd /vercel/sandbox && ls && cat one.txt two.txt && stat -c %u one.txt two.txt");
    expect(seen.out).toBe("one.txt\ntwo.txt\none1b\ntwo1000\n1000\n");
    expect(existsSync(frozen(s1.snapshotId))).toBe(true);
    for (const box of [middle, last]) await box.delete({ deleteOrphanSnapshots: true });
    await s2.delete();
    expect(existsSync(path.join(dataDir, "snapshots", s1.snapshotId))).toBe(false);
    expect(existsSync(path.join(dataDir, "snapshots", s2.snapshotId))).toBe(false);
  });
});

describe("a persistent sandbox's stop and its forks (latest SDK)", () => {
  const { Sandbox, Snapshot } = SDKS[1]![1];

  it("a persistent source's stop is a snapshot of its layer, not copied: it and its fork go on over it, kept until deleted", async () => {
    const source = await Sandbox.create(connect(api));
    expect((await sh(source, "dd if=/dev/zero of=/vercel/sandbox/big bs=1M count=8 status=none", true)).code).toBe(0);
    await source.writeFiles([{ path: "mine.txt", content: Buffer.from("original") }]);
    const before = await stat(path.join(await upperOf(source.name), SANDBOX_FILE, "big"));
    const stopped = await source.stop();
    const stopSnapshot = stopped.snapshot?.id;
    expect(stopSnapshot).toMatch(/^snap_/);
    expect(source.currentSnapshotId).toBe(stopSnapshot);
    const fork = await Sandbox.fork({ ...connect(api), sourceSandbox: source.name });
    expect(fork.sourceSnapshotId).toBe(stopSnapshot);
    const layer = frozen(stopSnapshot!);
    expect((await stat(path.join(layer, SANDBOX_FILE, "big"))).ino).toBe(before.ino);
    for (const box of [source, fork]) {
      expect(existsSync(path.join(await upperOf(box.name), SANDBOX_FILE, "big"))).toBe(false);
    }
    const seen = "stat -c '%s %u:%g' /vercel/sandbox/big /vercel/sandbox/mine.txt";
    expect((await sh(fork, seen)).out).toBe(`${8 * 1024 * 1024} 0:0\n8 1000:1000\n`);
    await fork.writeFiles([{ path: "mine.txt", content: Buffer.from("fork's") }]);
    await source.writeFiles([{ path: "mine.txt", content: Buffer.from("source's") }]);
    expect((await fork.readFileToBuffer({ path: "mine.txt" }))?.toString()).toBe("fork's");
    expect((await source.readFileToBuffer({ path: "mine.txt" }))?.toString()).toBe("source's");
    expect(await readFile(path.join(layer, SANDBOX_FILE, "mine.txt"), "utf8")).toBe("original");
    expect((await sh(source, "stat -c %s /vercel/sandbox/big")).out).toBe(`${8 * 1024 * 1024}\n`);
    await source.delete();
    await fork.delete();
    // As on Vercel, the stop's snapshot outlives its sandbox; its layer goes once the snapshot is deleted.
    expect(existsSync(layer)).toBe(true);
    await (await Snapshot.get({ ...connect(api), snapshotId: stopSnapshot! })).delete();
    expect(existsSync(path.join(dataDir, "snapshots", stopSnapshot!))).toBe(false);
  });

  it("a running persistent source gives its files as its last stop left them, or, never stopped, its base environment", async () => {
    const source = await Sandbox.create(connect(api));
    await source.writeFiles([{ path: "before.txt", content: Buffer.from("before") }]);
    const unstopped = await Sandbox.fork({ ...connect(api), sourceSandbox: source.name });
    expect((await sh(unstopped, "ls /vercel/sandbox")).out).toBe("");
    await source.stop();
    // Running again (a command resumes it), it writes more and changes what it had.
    expect(
      (await sh(source, "echo after > /vercel/sandbox/after.txt; echo changed > /vercel/sandbox/before.txt")).code,
    ).toBe(0);
    const fork = await Sandbox.fork({ ...connect(api), sourceSandbox: source.name });
    expect((await Sandbox.get({ ...connect(api), name: source.name })).status).toBe("running");
    expect((await sh(fork, "ls /vercel/sandbox; cat /vercel/sandbox/before.txt")).out).toBe("before.txt\nbefore");
    expect((await sh(source, "cat /vercel/sandbox/before.txt")).out).toBe("changed\n");
    for (const box of [unstopped, fork, source]) await box.delete();
  });

  it("a source that is not persistent gives its base environment, never the files it wrote since", async () => {
    const plain = await Sandbox.create({ ...connect(api), persistent: false });
    await plain.writeFiles([{ path: "later.txt", content: Buffer.from("later") }]);
    const bare = await Sandbox.fork({ ...connect(api), sourceSandbox: plain.name });
    expect((await sh(bare, "ls /vercel/sandbox")).out).toBe("");
    const seeded = await Sandbox.create(connect(api));
    await seeded.writeFiles([{ path: "seed.txt", content: Buffer.from("seed") }]);
    const snapshot = await seeded.snapshot();
    const based = await Sandbox.create({
      ...connect(api),
      persistent: false,
      source: { type: "snapshot", snapshotId: snapshot.snapshotId },
    });
    await based.writeFiles([{ path: "later.txt", content: Buffer.from("later") }]);
    const fork = await Sandbox.fork({ ...connect(api), sourceSandbox: based.name });
    expect(fork.sourceSnapshotId).toBe(snapshot.snapshotId);
    expect((await sh(fork, "ls /vercel/sandbox")).out).toBe("seed.txt\n");
    for (const box of [plain, bare, seeded, based, fork]) await box.delete();
    await snapshot.delete();
  });
});

describe("a chain deeper than the limit", () => {
  const { Sandbox } = SDKS[1]![1];
  it(`is flattened past ${MAX_LAYERS} layers, keeping files, deletions and opaque directories`, async () => {
    const box = await Sandbox.create({ ...connect(api), timeout: 600_000 });
    const setup = await sh(
      box,
      "rm /etc/ssl/certs/ca-certificates.crt && mkdir -p /etc/pki/x && echo x > /etc/pki/x/old",
      true,
    );
    expect(setup.code).toBe(0);
    let last = "";
    for (let i = 0; i <= MAX_LAYERS; i += 1) {
      // The second layer replaces a directory of the first (an opaque directory in the overlay).
      if (i === 1)
        expect((await sh(box, "rm -r /etc/pki/x && mkdir /etc/pki/x && echo y > /etc/pki/x/new", true)).code).toBe(0);
      const step = await sh(box, `echo ${i} > /vercel/sandbox/f${i} && rm -f /vercel/sandbox/f${i - 2}`);
      expect(step.code).toBe(0);
      last = (await box.snapshot({ expiration: 0 })).snapshotId;
    }
    // The last snapshot's own layer is the flattened chain: files of earlier layers are in it.
    expect(await readFile(path.join(frozen(last), SANDBOX_FILE, `f${MAX_LAYERS - 1}`), "utf8")).toBe(
      `${MAX_LAYERS - 1}\n`,
    );
    expect(await readFile(path.join(frozen(last), "etc/pki/x/new"), "utf8")).toBe("y\n");
    const copy = await Sandbox.create({ ...connect(api), source: { type: "snapshot", snapshotId: last } });
    const seen = await sh(
      copy,
      "ls /vercel/sandbox; ls /etc/pki/x; cat /etc/pki/x/new; ls /etc/ssl/certs/ca-certificates.crt 2>&1 || echo missing",
    );
    expect(seen.out).toBe(
      `f${MAX_LAYERS - 1}\nf${MAX_LAYERS}\nnew\ny\nls: cannot access '/etc/ssl/certs/ca-certificates.crt': No such file or directory\nmissing\n`,
    );
    await copy.delete();
    await box.delete({ deleteOrphanSnapshots: true });
  });
});
