import { describe, expect, it } from "vitest";
import { regionConflict } from "../../src/emulator/regions.js";
import { connect, SDKS, useEmulator } from "./harness.js";

const emulator = useEmulator();

describe.each(SDKS)("Vercel's answers with SDK %s", (version, { Sandbox, Snapshot, APIError }) => {
  const tag = version.replace(/\W/g, "");

  it("a deleted snapshot still lists and gets, with status deleted; deleting it again is a no-op", async () => {
    const api = emulator();
    const sandbox = await Sandbox.create(connect(api));
    const kept = await sandbox.snapshot();
    const gone = await Snapshot.get({ ...connect(api), snapshotId: (await sandbox.snapshot()).snapshotId });
    await gone.delete();
    expect(gone.status).toBe("deleted");
    expect((await Snapshot.get({ ...connect(api), snapshotId: gone.snapshotId })).status).toBe("deleted");
    const listed = await (await Snapshot.list({ ...connect(api), name: sandbox.name } as never)).toArray();
    const statusById = Object.fromEntries(listed.map((s: { id: string; status: string }) => [s.id, s.status]));
    expect(statusById).toEqual({ [kept.snapshotId]: "created", [gone.snapshotId]: "deleted" });
    await gone.delete();
    expect((await Snapshot.get({ ...connect(api), snapshotId: gone.snapshotId })).status).toBe("deleted");
    await sandbox.delete({ deleteOrphanSnapshots: true });
  });

  it("failoverRegions are stored, echoed by create, get and list, inherited by fork and cleared by []", async () => {
    const api = emulator();
    const name = `failover-${tag}`;
    const sandbox = await Sandbox.create({ ...connect(api), name, region: "sfo1", failoverRegions: ["iad1", "cdg1"] });
    expect(sandbox.region).toBe("sfo1");
    expect(sandbox.failoverRegions).toEqual(["iad1", "cdg1"]);
    expect((await Sandbox.get({ ...connect(api), name })).failoverRegions).toEqual(["iad1", "cdg1"]);
    const listed = await (await Sandbox.list({ ...connect(api), namePrefix: name })).toArray();
    expect(listed.map((s) => s.failoverRegions)).toEqual([["iad1", "cdg1"]]);
    const fork = await Sandbox.fork({ ...connect(api), sourceSandbox: name });
    expect(fork.failoverRegions).toEqual(["iad1", "cdg1"]);
    await sandbox.update({ failoverRegions: [] });
    expect((await Sandbox.get({ ...connect(api), name })).failoverRegions).toEqual([]);
    await fork.delete();
    await sandbox.delete();
  });

  it("conflicting region settings answer 400 and create nothing", async () => {
    const api = emulator();
    const name = `conflict-${tag}`;
    for (const regions of [
      { region: "iad1", failoverRegions: ["sfo1", "iad1"] },
      { region: "sfo1", failoverRegions: ["cdg1", "sfo1"] },
    ]) {
      const error = await Sandbox.create({ ...connect(api), name, ...regions }).catch((e) => e);
      expect(error).toBeInstanceOf(APIError);
      expect(error.response.status).toBe(400);
      expect(error.json.error.code).toBe("bad_request");
    }
    expect((await Sandbox.get({ ...connect(api), name }).catch((e) => e)).response.status).toBe(404);
    const sandbox = await Sandbox.create({ ...connect(api), name, region: "iad1", failoverRegions: ["sfo1"] });
    const patch = await sandbox.update({ region: "sfo1" }).catch((e) => e);
    expect(patch).toBeInstanceOf(APIError);
    expect(patch.response.status).toBe(400);
    const after = await Sandbox.get({ ...connect(api), name });
    expect([after.region, after.failoverRegions]).toEqual(["iad1", ["sfo1"]]);
    await sandbox.delete();
  });

  it("failoverRegions that include only the default region are accepted; naming that region is a 400", async () => {
    const api = emulator();
    const name = `default-failover-${tag}`;
    const sandbox = await Sandbox.create({ ...connect(api), name, failoverRegions: ["iad1", "sfo1"] });
    expect(sandbox.region).toBe("iad1");
    expect(sandbox.failoverRegions).toEqual(["iad1", "sfo1"]);
    const named = await Sandbox.create({
      ...connect(api),
      name: `${name}-named`,
      region: "iad1",
      failoverRegions: ["iad1", "sfo1"],
    }).catch((e) => e);
    expect(named).toBeInstanceOf(APIError);
    expect(named.response.status).toBe(400);
    expect(named.json.error.message).toContain("primary region");
    await sandbox.delete();
  });

  it("an update or a fork that leaves failover regions holding the sandbox's region is a 400, whichever side it names; a list is kept as given", async () => {
    const api = emulator();
    const name = `pair-${tag}`;
    const sandbox = await Sandbox.create({ ...connect(api), name, region: "sfo1", failoverRegions: ["iad1", "iad1"] });
    expect(sandbox.failoverRegions).toEqual(["iad1", "iad1"]);
    const refused = [
      await sandbox.update({ failoverRegions: ["cdg1", "sfo1"] }).catch((e) => e),
      await sandbox.update({ region: "iad1" }).catch((e) => e),
      await Sandbox.fork({ ...connect(api), sourceSandbox: name, region: "iad1" }).catch((e) => e),
      await Sandbox.fork({ ...connect(api), sourceSandbox: name, failoverRegions: ["sfo1"] }).catch((e) => e),
    ];
    expect(refused.map((e) => [e instanceof APIError, e.response?.status, e.json?.error?.message])).toEqual(
      Array(4).fill([true, 400, expect.stringContaining("primary region")]),
    );
    const after = await Sandbox.get({ ...connect(api), name });
    expect([after.region, after.failoverRegions]).toEqual(["sfo1", ["iad1", "iad1"]]);
    // The default region is not the caller's at create, but a fork of that sandbox makes the pair anew.
    const unnamed = await Sandbox.create({ ...connect(api), name: `${name}-default`, failoverRegions: ["iad1"] });
    expect([unnamed.region, unnamed.failoverRegions]).toEqual(["iad1", ["iad1"]]);
    const fork = await Sandbox.fork({ ...connect(api), sourceSandbox: `${name}-default` }).catch((e) => e);
    expect([fork instanceof APIError, fork.response?.status]).toEqual([true, 400]);
    const defaultUpdate = await unnamed.update({ failoverRegions: ["iad1", "sfo1"] }).catch((e) => e);
    expect([defaultUpdate instanceof APIError, defaultUpdate.response?.status]).toEqual([true, 400]);
    await unnamed.delete();
    await sandbox.delete();
  });
});

describe("Secure Compute networks (SDK latest)", () => {
  const { Sandbox, APIError } = SDKS[1]![1];

  it("`networkId` on create, fork and update is a 400 that names it, and creates nothing", async () => {
    const api = emulator();
    const created = await Sandbox.create({ ...connect(api), name: "private", networkId: "net_1" }).catch((e) => e);
    expect(created).toBeInstanceOf(APIError);
    expect(created.response.status).toBe(400);
    expect(created.json.error.message).toContain("networkId");
    expect((await Sandbox.get({ ...connect(api), name: "private" }).catch((e) => e)).response.status).toBe(404);
    const sandbox = await Sandbox.create({ ...connect(api), name: "public" });
    const fork = await Sandbox.fork({ ...connect(api), sourceSandbox: "public", networkId: "net_1" }).catch((e) => e);
    expect(fork.response.status).toBe(400);
    expect(fork.json.error.message).toContain("networkId");
    const update = await sandbox.update({ networkId: "net_1" }).catch((e) => e);
    expect(update.response.status).toBe(400);
    expect(update.json.error.message).toContain("networkId");
    expect((await Sandbox.get({ ...connect(api), name: "public" })).networkId).toBeUndefined();
    await sandbox.delete();
  });
});

describe("region conflicts (pure)", () => {
  it.each([
    { region: "iad1" },
    { region: "iad1", failoverRegions: [] },
    { region: "iad1", failoverRegions: ["sfo1", "cdg1"] },
    { region: "iad1", failoverRegions: ["iad1", "sfo1"], regionNamed: false },
    { region: "iad1", failoverRegions: ["sfo1", "sfo1"] },
  ])("%j is consistent", (settings) => {
    expect(regionConflict(settings)).toBeUndefined();
  });

  it.each([
    [{ region: "iad1", failoverRegions: ["iad1"] }, "primary region"],
    [{ region: "" }, "must not be empty"],
    [{ region: "iad1", failoverRegions: [" "] }, "empty region"],
  ])("%j conflicts: %s", (settings, problem) => {
    expect(regionConflict(settings)).toContain(problem);
  });
});
