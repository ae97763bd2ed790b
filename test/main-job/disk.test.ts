// Where the main job looks for VM1's disk on this machine (vm1OnDisk), against the real emulator: snapshots are
// layered, so each checkpoint holds what VM1 wrote since the one before (a deleted checkpoint's layer stays while a
// later one stands on it, and is scanned), VM1's own layer what it wrote since the last; a secret written to any of
// them is found there by the scan the main-job spec runs, so that spec's empty result means something.
import { randomBytes } from "node:crypto";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { Sandbox } from "@vercel/sandbox";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type LocalSandboxApi, startLocalSandboxApi } from "../../src/emulator/index.js";
import { listCheckpoints } from "../../src/host/vm.js";
import { vm1OnDisk } from "../../src/main-job/evidence.js";
import { scanForSecret } from "../support/secret-scan.js";

let dir = "";
let api: LocalSandboxApi | undefined;

beforeAll(async () => {
  dir = await mkdtemp(path.join(tmpdir(), "vsb-disk-"));
  api = await startLocalSandboxApi({ dataDir: path.join(dir, "emulator") });
});

afterAll(async () => {
  try {
    await api?.close();
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

describe("VM1's disk in the emulator's data dir", () => {
  it("is its checkpoints' layers (a deleted one kept while a later one stands on it) and its own layer", async () => {
    const connection = { ...api!.credentials, fetch: api!.fetch };
    const name = `vm1-${randomBytes(3).toString("hex")}`;
    const [first, second, third] = [0, 1, 2].map(() => randomBytes(12).toString("hex")) as [string, string, string];
    const state = "/vercel/sandbox/gateway/state";
    const run = async (script: string, secret: string) => {
      // Each command after a checkpoint resumes VM1 from it, as the host's wake does.
      const box = await Sandbox.get({ ...connection, name });
      expect((await box.runCommand({ cmd: "sh", args: ["-c", script], env: { S: secret } })).exitCode).toBe(0);
      return box;
    };
    const vm1 = await Sandbox.create({ ...connection, name });
    const write = `mkdir -p ${state} && for i in $(seq 30); do echo $i > ${state}/f$i; done && echo "$S" > ${state}/leak`;
    expect((await vm1.runCommand({ cmd: "sh", args: ["-c", write], env: { S: first } })).exitCode).toBe(0);
    const oldest = await vm1.snapshot({ expiration: 0 });
    await (await run(`echo "$S" > ${state}/later`, second)).snapshot({ expiration: 0 });
    // The host keeps the newest checkpoints: the first goes, but the second's layers stand on its layer.
    await oldest.delete();
    const awake = await run(`echo "$S" > ${state}/third`, third);

    const checkpoints = await listCheckpoints(connection, name);
    expect(checkpoints.map((c) => c.status).sort()).toEqual(["created", "deleted"]);
    const disk = await vm1OnDisk(
      path.join(dir, "emulator"),
      name,
      checkpoints.map((c) => c.id),
      {},
    );
    expect(disk.checkpointDirs).toHaveLength(2);
    expect(disk.sandboxDirs).toHaveLength(1);
    const found = async (roots: string[], secret: string) => {
      const files: string[] = [];
      for (const root of roots) files.push(...(await scanForSecret(root, secret)).matches.map((m) => path.basename(m)));
      return files;
    };
    // Each secret is found once, in the layer that holds it: the first only in the deleted checkpoint's layer.
    expect(await found(disk.checkpointDirs, first)).toEqual(["leak"]);
    expect(await found(disk.checkpointDirs, second)).toEqual(["later"]);
    expect(await found(disk.sandboxDirs, third)).toEqual(["third"]);
    expect(await found(disk.sandboxDirs, first)).toEqual([]);
    await awake.delete();
  }, 180_000);
});
