import { mkdtemp, readdir, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { type LocalSandboxApi, startLocalSandboxApi } from "../../src/emulator/index.js";
import { connect, raw, SDKS } from "./harness.js";

// Own data dir, so a test can break a snapshot's files on disk to make a boot fail.
let api: LocalSandboxApi;
let dataDir: string;
beforeAll(async () => {
  dataDir = await mkdtemp(path.join(tmpdir(), "emulator-races-"));
  api = await startLocalSandboxApi({ dataDir });
});
afterAll(async () => {
  await api?.close();
  await rm(dataDir, { recursive: true, force: true });
});

const createBody = (name: string, extra: Record<string, unknown> = {}) =>
  JSON.stringify({ projectId: api.credentials.projectId, name, ...extra });

/** Resolves once the emulator has received (and so started handling) the request. */
async function arrived(method: string, pathname: string, after: number): Promise<void> {
  await vi.waitFor(
    () => {
      const seen = api
        .requests()
        .slice(after)
        .some((r) => r.method === method && r.path === pathname);
      if (!seen) throw new Error(`${method} ${pathname} has not arrived yet`);
    },
    { timeout: 10_000, interval: 5 },
  );
}

async function directoriesOf(name: string): Promise<string[]> {
  return (await readdir(path.join(dataDir, "sandboxes"))).filter((d) => d === name || d.startsWith(`${name}~`));
}

describe.each(SDKS)("create and delete of one name with SDK %s", (version, { Sandbox, Snapshot, APIError }) => {
  const tag = version.replace(/\W/g, "");

  it("a create issued while a delete of the same name is in flight waits, then keeps its own files", async () => {
    const name = `race-${tag}`;
    for (let round = 0; round < 5; round++) {
      const old = await Sandbox.create({ ...connect(api), name });
      await old.runCommand("bash", ["-c", "echo old > old.txt"]);
      const before = api.requests().length;
      const deleting = old.delete();
      await arrived("DELETE", `/v2/sandboxes/${name}`, before);
      const fresh = await Sandbox.create({ ...connect(api), name });
      await fresh.runCommand("bash", ["-c", `echo round ${round} > new.txt`]);
      await deleting;
      const files = await fresh.runCommand("bash", ["-c", "cat new.txt; ls"]);
      expect(await files.stdout()).toBe(`round ${round}\nnew.txt\n`);
      expect((await Sandbox.get({ ...connect(api), name })).status).toBe("running");
      await fresh.delete();
    }
    expect(await directoriesOf(name)).toEqual([]);
  });

  it("two concurrent creates of one name: one sandbox, the other answer is 409", async () => {
    const name = `twice-${tag}`;
    const answers = await Promise.all([1, 2].map(() => raw(api, "POST", "/v3/sandboxes", createBody(name))));
    expect(answers.map((a) => a.status).sort()).toEqual([200, 409]);
    const sessions = await raw(api, "GET", `/v2/sandboxes/sessions?name=${name}`);
    expect((sessions.json.sessions as unknown[]).length).toBe(1);
    await (await Sandbox.get({ ...connect(api), name })).delete();
  });

  it("a failed boot releases the name and leaves no files or session behind", async () => {
    const name = `failboot-${tag}`;
    const source = await Sandbox.create(connect(api));
    const snapshot = await source.snapshot();
    await rm(path.join(dataDir, "snapshots", snapshot.snapshotId), { recursive: true, force: true });
    const failed = await Sandbox.create({
      ...connect(api),
      name,
      source: { type: "snapshot", snapshotId: snapshot.snapshotId },
    }).catch((e) => e);
    expect(failed).toBeInstanceOf(APIError);
    expect(failed.response.status).toBe(422);
    expect(failed.json.error.code).toBe("sandbox_boot_failed");
    expect((await Sandbox.get({ ...connect(api), name }).catch((e) => e)).response.status).toBe(404);
    const sessions = await raw(api, "GET", `/v2/sandboxes/sessions?name=${name}`);
    expect(sessions.json.sessions).toEqual([]);
    expect(await directoriesOf(name)).toEqual([]);
    const again = await Sandbox.create({ ...connect(api), name });
    expect(again.status).toBe("running");
    await again.delete();
    await (await Snapshot.get({ ...connect(api), snapshotId: snapshot.snapshotId })).delete();
    await source.delete();
  });
});
