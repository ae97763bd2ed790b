// A restore must hand back a session that stands on its snapshot, even when something resumed the stopped
// sandbox between the capture and the restore's update (the SDK resumes on every command: a non-persistent
// sandbox then boots its bare image). The emulator and the SDK are the real ones.
import * as sdk from "@vercel/sandbox";
import { expect, it } from "vitest";
import { VercelProject } from "../../src/vercel/client.js";
import { connect, useEmulator } from "../emulator/harness.js";

const emulator = useEmulator();

it("a restore after a stray resume stops that session and starts one from the snapshot", async () => {
  const api = emulator();
  const project = new VercelProject(sdk, api.credentials, api.fetch);
  const sandbox = await project.create({ name: "restore-after-stray-resume", persistent: false });
  await sandbox.writeFiles([{ path: "kept.txt", content: Buffer.from("kept") }]);
  const snapshotId = await project.capture(sandbox, 0);
  const stray = await sdk.Sandbox.get({ ...connect(api), name: sandbox.name });
  expect(await (await stray.runCommand("cat", ["kept.txt"])).exitCode).not.toBe(0);
  const restored = await project.restore(sandbox, snapshotId);
  expect(restored.sourceSnapshotId).toBe(snapshotId);
  expect(await (await restored.runCommand("cat", ["kept.txt"])).stdout()).toBe("kept");
  await restored.delete();
});
