// Where the main job looks for VM1's disk on this machine (vm1OnDisk), against the real emulator: a checkpoint holds
// what VM1 had written when it slept, VM1's own layer what it wrote since, and a secret written to either is found
// there by the scan the main-job spec runs, so that spec's empty result means something.
import { randomBytes } from "node:crypto";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { Sandbox } from "@vercel/sandbox";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type LocalSandboxApi, startLocalSandboxApi } from "../../src/emulator/index.js";
import { listCheckpoints } from "../../src/host/vm.js";
import { vm1OnDisk } from "../../src/main-job/evidence.js";
import { scanForSecret } from "../gateway/files.js";

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
  it("is its checkpoint and its own layer, and a secret written to either is found there", async () => {
    const connection = { ...api!.credentials, fetch: api!.fetch };
    const name = `vm1-${randomBytes(3).toString("hex")}`;
    const [before, after] = [randomBytes(12).toString("hex"), randomBytes(12).toString("hex")];
    const vm1 = await Sandbox.create({ ...connection, name });
    const state = "/vercel/sandbox/gateway/state";
    const write = `mkdir -p ${state} && for i in $(seq 30); do echo $i > ${state}/f$i; done && echo "$S" > ${state}/leak`;
    expect((await vm1.runCommand({ cmd: "sh", args: ["-c", write], env: { S: before } })).exitCode).toBe(0);
    await vm1.snapshot({ expiration: 0 });
    // The next command resumes VM1 from the checkpoint, as the host's wake does.
    const awake = await Sandbox.get({ ...connection, name });
    const later = `echo "$S" > ${state}/later`;
    expect((await awake.runCommand({ cmd: "sh", args: ["-c", later], env: { S: after } })).exitCode).toBe(0);

    const checkpoints = (await listCheckpoints(connection, name)).filter((c) => c.status === "created");
    const disk = await vm1OnDisk(
      path.join(dir, "emulator"),
      name,
      checkpoints.map((c) => c.id),
      {},
    );
    expect(disk.checkpointDirs).toHaveLength(1);
    expect(disk.sandboxDirs).toHaveLength(1);
    const [checkpoint, layer] = [disk.checkpointDirs[0]!, disk.sandboxDirs[0]!];
    const leak = (scan: { matches: string[] }) => scan.matches.map((m) => path.basename(m));

    const inCheckpoint = await scanForSecret(checkpoint, before);
    expect(inCheckpoint.filesRead).toBeGreaterThan(30);
    expect(leak(inCheckpoint)).toEqual(["leak"]);
    expect(leak(await scanForSecret(checkpoint, after))).toEqual([]);
    expect(leak(await scanForSecret(layer, before))).toEqual(["leak"]);
    expect(leak(await scanForSecret(layer, after))).toEqual(["later"]);
    await awake.delete();
  }, 180_000);
});
