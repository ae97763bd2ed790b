// Drives and mounts (SDK 3.3+, so the latest SDK only): persistent volumes of the project that outlive
// sandboxes, mounted read-write by one session at a time or as a read-only snapshot by any while none holds it.

import { randomBytes } from "node:crypto";
import { existsSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { mountsOf } from "../../src/emulator/drives.js";
import { connect, raw, SDKS, sh, useEmulator } from "./harness.js";

const emulator = useEmulator();
const { Drive, Sandbox, APIError } = SDKS[1]![1];

describe("drives with SDK latest", () => {
  it("getOrCreate is idempotent, list finds it, and its files outlive the sandbox that wrote them", async () => {
    const api = emulator();
    const drive = await Drive.getOrCreate({ ...connect(api), name: "data" });
    expect((await Drive.getOrCreate({ ...connect(api), name: "data" })).driveId).toBe(drive.driveId);
    expect(drive.projectId).toBe(api.credentials.projectId);
    const listed = await (await Drive.list({ ...connect(api), namePrefix: "da" } as never)).toArray();
    expect(listed.map((d: { name: string }) => d.name)).toEqual(["data"]);

    const writer = await Sandbox.create({ ...connect(api), mounts: { "/mnt/data": drive } });
    expect(writer.mounts).toEqual({ "/mnt/data": { drive: "data", mode: "read-write" } });
    expect((await Drive.getOrCreate({ ...connect(api), name: "data" })).currentSandboxName).toBe(writer.name);
    const wrote = await sh(writer, "echo kept > /mnt/data/note && stat -c '%U' /mnt/data/note");
    expect(wrote).toMatchObject({ code: 0, out: "vercel-sandbox\n" });

    const busy = await Sandbox.create({ ...connect(api), mounts: { "/mnt/data": drive } }).catch((e) => e);
    expect(busy).toBeInstanceOf(APIError);
    expect(busy.response.status).toBe(409);
    expect(busy.json.error.code).toBe("drive_in_use");
    // A snapshot mount copies the drive on the host: refused while a live session could change it mid-copy.
    const held = await Sandbox.create({ ...connect(api), mounts: { "/mnt/ro": drive.snapshot() } }).catch((e) => e);
    expect(held.response.status).toBe(409);
    expect(held.json.error.code).toBe("drive_attached_read_write");

    const inUse = await drive.delete().catch((e) => e);
    expect(inUse.response.status).toBe(409);
    await writer.delete();
    const reader = await Sandbox.create({ ...connect(api), mounts: { "/mnt/ro": drive.snapshot() } });
    expect(await sh(reader, "cat /mnt/ro/note; echo x > /mnt/ro/other")).toMatchObject({
      out: "kept\n",
      code: 1,
    });
    expect((await sh(reader, "cat /mnt/ro/other 2>&1")).code).not.toBe(0);
    const next = await Sandbox.create({ ...connect(api), mounts: { "/work/shared": drive } });
    expect(
      await sh(next, "cat /work/shared/note && stat -c '%U' /work/shared/note && echo more >> /work/shared/note"),
    ).toMatchObject({
      code: 0,
      out: "kept\nvercel-sandbox\n",
    });
    await next.update({ mounts: {} });
    await next.stop();
    expect((await Sandbox.get({ ...connect(api), name: next.name })).mounts).toBeUndefined();
    await drive.delete();
    expect((await (await Drive.list(connect(api))).toArray()).map((d: { name: string }) => d.name)).toEqual([]);
    const gone = await Sandbox.create({ ...connect(api), mounts: { "/mnt/data": drive } }).catch((e) => e);
    expect(gone.response.status).toBe(404);
    await Promise.all([reader.delete(), next.delete()]);
  });

  it("a mount path the sandbox made a link cannot lead the mount out of the sandbox", async () => {
    const api = emulator();
    const drive = await Drive.getOrCreate({ ...connect(api), name: "linked" });
    const host = `/tmp/drive-escape-${randomBytes(6).toString("hex")}`;
    const sandbox = await Sandbox.create(connect(api));
    // An absolute link that, read on the host before the sandbox's root is entered, would name a host path.
    expect((await sh(sandbox, `mkdir -p ${host} && ln -s ${host} /vercel/sandbox/escape`)).code).toBe(0);
    await sandbox.update({ mounts: { "/vercel/sandbox/escape/d": drive } });
    await sandbox.stop();
    expect((await sh(sandbox, "echo in > /vercel/sandbox/escape/d/f && cat /vercel/sandbox/escape/d/f")).out).toBe(
      "in\n",
    );
    expect(existsSync(host)).toBe(false);
    await sandbox.delete();
  });

  it("bad mounts are refused before anything is created; `drives` is never a sandbox name", async () => {
    const api = emulator();
    await Drive.getOrCreate({ ...connect(api), name: "d" });
    const count = async () => ((await raw(api, "GET", "/v2/sandboxes")).json.sandboxes as unknown[]).length;
    const before = await count();
    const bodies = [
      { mounts: { "/proc/x": { drive: "d" } } },
      { mounts: { "/a": { drive: "d" }, "/a/b": { drive: "d", mode: "snapshot" } } },
      { mounts: { relative: { drive: "d" } } },
      { name: "drives" },
    ];
    for (const body of bodies) {
      const created = await raw(
        api,
        "POST",
        "/v3/sandboxes",
        JSON.stringify({ projectId: api.credentials.projectId, ...body }),
      );
      expect(created.status).toBe(400);
    }
    const unknown = await raw(
      api,
      "POST",
      "/v3/sandboxes",
      JSON.stringify({ projectId: api.credentials.projectId, mounts: { "/m": { drive: "nope" } } }),
    );
    expect(unknown.status).toBe(404);
    expect(await count()).toBe(before);
  });
});

describe("mount validation (pure)", () => {
  it("maps read-only to snapshot and a missing mode to read-write", () => {
    expect(mountsOf({ mounts: { "/x": { drive: "a", mode: "read-only" }, "/y": { drive: "b" } } })).toEqual({
      "/x": { drive: "a", mode: "snapshot" },
      "/y": { drive: "b", mode: "read-write" },
    });
    expect(() => mountsOf({ mounts: { "/x/../y": { drive: "a" } } })).toThrow(/normalised/);
  });
});
