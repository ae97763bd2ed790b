// The rerun cache's store, against the real emulator and SDK: a snapshot the first emulator on a data dir saved is
// there for the next emulator started on that dir (a sandbox created from it holds its files), while every other
// snapshot and every sandbox of the first run is gone from the disk; an emulator asked to restore nothing keeps
// nothing of it either.
import { randomBytes } from "node:crypto";
import { existsSync } from "node:fs";
import { mkdtemp, readdir, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { Sandbox, Snapshot } from "@vercel/sandbox";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type LocalSandboxApi, startLocalSandboxApi } from "../../src/emulator/index.js";

let dir = "";
const started: LocalSandboxApi[] = [];
const start = async (restoreSnapshots?: string[]) => {
  const api = await startLocalSandboxApi({ dataDir: path.join(dir, "emulator"), restoreSnapshots });
  started.push(api);
  return { api, connection: { ...api.credentials, fetch: api.fetch } };
};
const read = async (box: Sandbox, file: string) =>
  (await (await box.runCommand("sh", ["-c", `cat ${file} 2>/dev/null || echo missing`])).stdout()).trim();

beforeAll(async () => {
  dir = await mkdtemp(path.join(tmpdir(), "vsb-disk-"));
});

afterAll(async () => {
  try {
    for (const api of started) await api.close();
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

describe("the main job's emulator store between runs", () => {
  it("keeps the saved snapshot for the next emulator on the data dir, and nothing else of the run", async () => {
    const token = randomBytes(8).toString("hex");
    const first = await start();
    const builder = await Sandbox.create({ ...first.connection, name: `vm1-image-${token.slice(0, 6)}` });
    await builder.runCommand("sh", ["-c", `echo image-${token} > /vercel/sandbox/kept`]);
    const image = await builder.snapshot({ expiration: 0 });
    await first.api.saveSnapshot(image.snapshotId);
    const other = await Sandbox.create({ ...first.connection, name: `other-${token.slice(0, 6)}` });
    await other.runCommand("sh", ["-c", `echo other-${token} > /vercel/sandbox/other`]);
    const unsaved = await other.snapshot({ expiration: 0 });
    await first.api.close();

    const second = await start([image.snapshotId, unsaved.snapshotId]);
    expect(second.api.restored).toEqual([image.snapshotId]);
    const listed = await (
      await Snapshot.list({ ...second.connection } as Parameters<typeof Snapshot.list>[0])
    ).toArray();
    expect(listed.map((s) => [s.id, s.status])).toEqual([[image.snapshotId, "created"]]);
    const snapshotDirs = await readdir(path.join(dir, "emulator", "snapshots"));
    expect(snapshotDirs).toEqual([image.snapshotId]);
    expect(await readdir(path.join(dir, "emulator", "sandboxes"))).toEqual([]);
    const vm1 = await Sandbox.create({
      ...second.connection,
      source: { type: "snapshot", snapshotId: image.snapshotId },
    } as Parameters<typeof Sandbox.create>[0]);
    expect(await read(vm1, "/vercel/sandbox/kept")).toBe(`image-${token}`);
    expect(await read(vm1, "/vercel/sandbox/other")).toBe("missing");
    await vm1.delete();
    await second.api.close();

    // A run that restores nothing (--fresh, or no record) starts from an empty store.
    const third = await start([]);
    expect(third.api.restored).toEqual([]);
    expect(existsSync(path.join(dir, "emulator", "snapshots", image.snapshotId))).toBe(false);
    await third.api.close();
  }, 240_000);

  it("a restored chain's layer whose own snapshot was not saved goes with the last snapshot standing on it", async () => {
    const first = await start();
    const base = await Sandbox.create(first.connection);
    await base.runCommand("sh", ["-c", "echo base > /vercel/sandbox/base"]);
    const lower = await base.snapshot({ expiration: 0 });
    const upper = await Sandbox.create({
      ...first.connection,
      source: { type: "snapshot", snapshotId: lower.snapshotId },
    } as Parameters<typeof Sandbox.create>[0]);
    await upper.runCommand("sh", ["-c", "echo upper > /vercel/sandbox/upper"]);
    const top = await upper.snapshot({ expiration: 0 });
    await first.api.saveSnapshot(top.snapshotId);
    await first.api.close();

    const second = await start([top.snapshotId]);
    expect(second.api.restored).toEqual([top.snapshotId]);
    const snapshots = path.join(dir, "emulator", "snapshots");
    expect((await readdir(snapshots)).sort()).toEqual([lower.snapshotId, top.snapshotId].sort());
    const box = await Sandbox.create({
      ...second.connection,
      source: { type: "snapshot", snapshotId: top.snapshotId },
    } as Parameters<typeof Sandbox.create>[0]);
    expect(await read(box, "/vercel/sandbox/base")).toBe("base");
    await (
      await Snapshot.get({ ...second.connection, snapshotId: top.snapshotId } as Parameters<typeof Snapshot.get>[0])
    ).delete();
    expect(existsSync(path.join(snapshots, lower.snapshotId))).toBe(true);
    await box.delete();
    expect(await readdir(snapshots)).toEqual([]);
    await second.api.close();
  }, 240_000);
});
