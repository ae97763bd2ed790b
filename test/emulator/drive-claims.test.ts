// A read-write drive is held by every session that is not stopped, from the moment its boot begins: two boots
// that want it at once cannot both have it, and a snapshot mount (a copy of the drive made on the host) is
// refused while a live session holds the drive read-write, since that session could change the tree mid-copy.
import { describe, expect, it } from "vitest";
import { connect, raw, SDKS, sh, useEmulator } from "./harness.js";

const emulator = useEmulator();
const { Drive, Sandbox, APIError } = SDKS[1]![1];

describe("drive claims", () => {
  it("two creates at once naming one drive read-write: exactly one boots, the other is refused drive_in_use", async () => {
    const api = emulator();
    await Drive.getOrCreate({ ...connect(api), name: "contested" });
    const body = JSON.stringify({
      projectId: api.credentials.projectId,
      mounts: { "/mnt/d": { drive: "contested", mode: "read-write" } },
    });
    const answers = await Promise.all([1, 2].map(() => raw(api, "POST", "/v3/sandboxes", body)));
    expect(answers.map((a) => a.status).sort()).toEqual([200, 409]);
    expect(answers.find((a) => a.status === 409)?.json.error?.code).toBe("drive_in_use");
    const winner = answers.find((a) => a.status === 200)!.json.sandbox as { name: string };
    const drive = await Drive.getOrCreate({ ...connect(api), name: "contested" });
    expect(drive.currentSandboxName).toBe(winner.name);
    await (await Sandbox.get({ ...connect(api), name: winner.name })).delete();
  });

  it("a snapshot mount of a drive a live session holds read-write is refused, and allowed once it stopped", async () => {
    const api = emulator();
    const drive = await Drive.getOrCreate({ ...connect(api), name: "held" });
    const writer = await Sandbox.create({ ...connect(api), mounts: { "/mnt/d": drive } });
    expect((await sh(writer, "echo kept > /mnt/d/note")).code).toBe(0);
    const refused = await Sandbox.create({ ...connect(api), mounts: { "/mnt/ro": drive.snapshot() } }).catch((e) => e);
    expect(refused).toBeInstanceOf(APIError);
    expect(refused.response.status).toBe(409);
    expect(refused.json.error.code).toBe("drive_attached_read_write");
    await writer.stop();
    const reader = await Sandbox.create({ ...connect(api), mounts: { "/mnt/ro": drive.snapshot() } });
    expect(await sh(reader, "cat /mnt/ro/note")).toMatchObject({ code: 0, out: "kept\n" });
    await Promise.all([reader.delete(), writer.delete()]);
  });
});
