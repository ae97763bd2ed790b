import { setTimeout } from "node:timers/promises";
import { describe, expect, it } from "vitest";
import { connect, SDKS, useEmulator } from "./harness.js";

const emulator = useEmulator();

describe.each(SDKS)("snapshots with SDK %s", (_version, { Sandbox, Snapshot, APIError }) => {
  it("snapshot stops the source; a sandbox created from it sees its files", async () => {
    const api = emulator();
    const source = await Sandbox.create(connect(api));
    await source.writeFiles([{ path: "snap.txt", content: Buffer.from("in snapshot") }]);
    await source.runCommand("bash", [
      "-c",
      "mkdir -p /home/vercel-sandbox/.cfg && echo home > /home/vercel-sandbox/.cfg/x",
    ]);
    const snapshot = await source.snapshot();
    expect(snapshot.status).toBe("created");
    expect((await Sandbox.get({ ...connect(api), name: source.name })).status).toBe("stopped");
    const copy = await Sandbox.create({
      ...connect(api),
      source: { type: "snapshot", snapshotId: snapshot.snapshotId },
    });
    expect(copy.sourceSnapshotId).toBe(snapshot.snapshotId);
    expect(await (await copy.runCommand("cat", ["snap.txt", "/home/vercel-sandbox/.cfg/x"])).stdout()).toBe(
      "in snapshothome\n",
    );
    await copy.delete();
    await source.delete();
  });

  it("gets, lists and deletes snapshots, with expiration", async () => {
    const api = emulator();
    const sandbox = await Sandbox.create(connect(api));
    const forever = await sandbox.snapshot({ expiration: 0 });
    const hour = await sandbox.snapshot({ expiration: 3_600_000 });
    expect(forever.expiresAt).toBeUndefined();
    expect(hour.expiresAt!.getTime() - hour.createdAt.getTime()).toBe(3_600_000);
    const got = await Snapshot.get({ ...connect(api), snapshotId: hour.snapshotId });
    expect(got.sourceSessionId).toBe(hour.sourceSessionId);
    const listed = await (await Snapshot.list({ ...connect(api), name: sandbox.name } as never)).toArray();
    expect(listed.map((s: { id: string }) => s.id).sort()).toEqual([forever.snapshotId, hour.snapshotId].sort());
    await forever.delete();
    expect((await Snapshot.get({ ...connect(api), snapshotId: forever.snapshotId })).status).toBe("deleted");
    const error = await Sandbox.create({
      ...connect(api),
      source: { type: "snapshot", snapshotId: forever.snapshotId },
    }).catch((e) => e);
    expect(error).toBeInstanceOf(APIError);
    expect(error.response.status).toBe(410);
    expect(error.json.error.code).toBe("snapshot_not_found");
    const unknown = await Sandbox.create({
      ...connect(api),
      source: { type: "snapshot", snapshotId: "snap_never_existed" },
    }).catch((e) => e);
    expect(unknown.response.status).toBe(404);
    await sandbox.delete({ deleteOrphanSnapshots: true });
  });

  it("a non-persistent sandbox starts every session from its clean image", async () => {
    const sandbox = await Sandbox.create({ ...connect(emulator()), persistent: false });
    await sandbox.writeFiles([{ path: "scratch.txt", content: Buffer.from("gone after stop") }]);
    await sandbox.stop();
    expect(await sandbox.readFileToBuffer({ path: "scratch.txt" })).toBeNull();
    await sandbox.delete();
  });

  it("a persistent sandbox's stop takes a snapshot: answered, listed, current, restored by the next session", async () => {
    const api = emulator();
    const sandbox = await Sandbox.create(connect(api));
    await sandbox.writeFiles([{ path: "kept.txt", content: Buffer.from("at stop") }]);
    const stopped = await sandbox.stop();
    const id = stopped.snapshot?.id;
    expect(id).toMatch(/^snap_/);
    expect(stopped.snapshot?.sourceSessionId).toBe(stopped.id);
    expect(sandbox.currentSnapshotId).toBe(id);
    expect((await Sandbox.get({ ...connect(api), name: sandbox.name })).currentSnapshotId).toBe(id);
    const got = await Snapshot.get({ ...connect(api), snapshotId: id! });
    expect(got.status).toBe("created");
    expect(got.expiresAt!.getTime() - got.createdAt.getTime()).toBe(30 * 24 * 3600 * 1000);
    // A second stop of the stopped session takes no other snapshot.
    expect((await sandbox.stop()).snapshot).toBeUndefined();
    const listed = await (await Snapshot.list({ ...connect(api), name: sandbox.name } as never)).toArray();
    expect(listed.map((s: { id: string }) => s.id)).toEqual([id]);
    // The next session boots from it; a sandbox created from it has the files as the stop left them.
    expect(await (await sandbox.runCommand("cat", ["kept.txt"])).stdout()).toBe("at stop");
    expect(sandbox.sourceSnapshotId).toBe(id);
    const copy = await Sandbox.create({ ...connect(api), source: { type: "snapshot", snapshotId: id! } });
    expect(await (await copy.runCommand("cat", ["kept.txt"])).stdout()).toBe("at stop");
    await copy.delete();
    await sandbox.delete({ deleteOrphanSnapshots: true });
    expect((await Snapshot.get({ ...connect(api), snapshotId: id! })).status).toBe("deleted");
  });

  it("the stop's snapshot follows the sandbox's snapshotExpiration and keepLastSnapshots; a non-persistent stop takes none", async () => {
    const api = emulator();
    const sandbox = await Sandbox.create({
      ...connect(api),
      snapshotExpiration: 3_600_000,
      keepLastSnapshots: { count: 1 },
    } as never);
    const explicit = await sandbox.snapshot({ expiration: 0 });
    await sandbox.runCommand("true", []);
    const stopped = await sandbox.stop();
    expect(stopped.snapshot?.parentId).toBe(explicit.snapshotId);
    expect(stopped.snapshot?.creationMethod).toBeUndefined();
    const atStop = await Snapshot.get({ ...connect(api), snapshotId: stopped.snapshot!.id });
    expect(atStop.expiresAt!.getTime() - atStop.createdAt.getTime()).toBe(3_600_000);
    expect((await Snapshot.get({ ...connect(api), snapshotId: explicit.snapshotId })).status).toBe("deleted");
    await sandbox.delete({ deleteOrphanSnapshots: true });

    const plain = await Sandbox.create({ ...connect(api), persistent: false });
    expect((await plain.stop()).snapshot).toBeUndefined();
    expect(await (await Snapshot.list({ ...connect(api), name: plain.name } as never)).toArray()).toEqual([]);
    await plain.delete();
  });

  it("a persistent sandbox's timeout takes the stop's snapshot too", async () => {
    const api = emulator();
    const sandbox = await Sandbox.create({ ...connect(api), timeout: 1_000 });
    await sandbox.writeFiles([{ path: "late.txt", content: Buffer.from("before the timeout") }]);
    let current: string | undefined;
    for (let i = 0; i < 100 && !current; i++) {
      await setTimeout(100);
      current = (await Sandbox.get({ ...connect(api), name: sandbox.name })).currentSnapshotId;
    }
    expect(current).toMatch(/^snap_/);
    const listed = await (await Snapshot.list({ ...connect(api), name: sandbox.name } as never)).toArray();
    expect(listed.map((s: { id: string }) => s.id)).toEqual([current]);
    expect(await (await sandbox.runCommand("cat", ["late.txt"])).stdout()).toBe("before the timeout");
    await sandbox.delete({ deleteOrphanSnapshots: true });
  });

  it("keepLastSnapshots deletes the oldest snapshots beyond the count", async () => {
    const api = emulator();
    const sandbox = await Sandbox.create({ ...connect(api), keepLastSnapshots: { count: 1 } } as never);
    const first = await sandbox.snapshot();
    const second = await sandbox.snapshot();
    const listed = await (await Snapshot.list({ ...connect(api), name: sandbox.name } as never)).toArray();
    const statusById = Object.fromEntries(listed.map((s: { id: string; status: string }) => [s.id, s.status]));
    expect(statusById).toEqual({ [first.snapshotId]: "deleted", [second.snapshotId]: "created" });
    await sandbox.delete({ deleteOrphanSnapshots: true });
  });

  it("resumes that race a snapshot share one session, whose writes to image dirs work", async () => {
    const api = emulator();
    const sandbox = await Sandbox.create(connect(api));
    await sandbox.writeFiles([{ path: "before.txt", content: Buffer.from("kept") }]);
    const snapshotting = sandbox.snapshot();
    // The resumes arrive while the snapshot stops the session, so they all wait for the same stop.
    while ((await Sandbox.get({ ...connect(api), name: sandbox.name })).status === "running") await setTimeout(5);
    const resumed = await Promise.all(
      Array.from({ length: 4 }, () => Sandbox.get({ ...connect(api), name: sandbox.name, resume: true })),
    );
    const snapshot = await snapshotting;
    expect(new Set(resumed.map((r) => r.currentSession().sessionId)).size).toBe(1);
    // The mkdir needs a copy-up of the image layer's home dir, which a second overlay on the same work dir breaks (ENOENT).
    const out = await resumed[0]!.runCommand("bash", ["-c", "mkdir /home/vercel-sandbox/.made && cat before.txt"]);
    expect({ code: out.exitCode, stdout: await out.stdout(), stderr: await out.stderr() }).toEqual({
      code: 0,
      stdout: "kept",
      stderr: "",
    });
    const copy = await Sandbox.create({
      ...connect(api),
      source: { type: "snapshot", snapshotId: snapshot.snapshotId },
    });
    expect(await (await copy.runCommand("cat", ["before.txt"])).stdout()).toBe("kept");
    await copy.delete();
    await sandbox.delete({ deleteOrphanSnapshots: true });
  });

  it("files survive stop and resume", async () => {
    const sandbox = await Sandbox.create(connect(emulator()));
    await sandbox.runCommand("bash", ["-c", "echo persisted > /home/vercel-sandbox/p.txt"]);
    await sandbox.stop();
    await sandbox.stop();
    expect(await (await sandbox.runCommand("cat", ["/home/vercel-sandbox/p.txt"])).stdout()).toBe("persisted\n");
    await sandbox.delete();
  });
});
