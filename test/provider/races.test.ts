// Races between provider calls (issue 11), against the emulator through the real SDK: provision and destroy
// of one lease at once, destroy or maintain while a provision's create is still in flight, and many
// provisions at once, of distinct operations and of one. Each ends by counting the sandboxes of its own scope.
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { Sandbox } from "@vercel/sandbox";
import { type WorkerProfile, WorkerProviderError } from "openclaw/plugin-sdk/plugin-entry";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { enrollingOptions, operationId } from "../../src/conformance/fixtures.js";
import { type LocalSandboxApi, startLocalSandboxApi } from "../../src/emulator/index.js";
import { sandboxNameOf } from "../../src/provider/allocation.js";
import {
  createVercelSandboxProvider,
  type VercelSandboxProvider,
  type VercelSandboxProviderOptions,
} from "../../src/provider/index.js";

let api: LocalSandboxApi;
const dirs: string[] = [];
const providers: VercelSandboxProvider[] = [];
const connection = () => ({ ...api.credentials, fetch: api.fetch });
const CREATE = /^\/v[23]\/sandboxes$/;
const quickProof = { budgetMs: 5_000, firstDelayMs: 20, maxDelayMs: 250 };
let scopes = 0;

/** A gateway scope of its own (so the spec can count its sandboxes by tag) and a profile for it. */
async function world() {
  scopes += 1;
  const scope = `races-${scopes}`;
  const stateDir = await mkdtemp(join(tmpdir(), "vsb-races-"));
  dirs.push(stateDir);
  const profile: WorkerProfile = {
    apiUrl: api.url,
    tokenEnv: "RACES_TOKEN",
    teamId: api.credentials.teamId,
    projectId: api.credentials.projectId,
    timeout: "10m",
  };
  const make = (options: Partial<VercelSandboxProviderOptions> = {}) => {
    const provider = createVercelSandboxProvider({
      env: { RACES_TOKEN: api.credentials.token },
      logger: { warn: () => undefined },
      scope,
      stateDir,
      enroll: async ({ enrollment }) => enrollment.waitForDeviceId(),
      absenceProof: quickProof,
      ...options,
    });
    providers.push(provider);
    return provider;
  };
  const sandboxes = async () =>
    (await (await Sandbox.list({ ...connection(), tags: { "openclaw-scope": scope } })).toArray()).map((s) => s.name);
  return { scope, profile, make, sandboxes };
}

async function waitFor(condition: () => boolean | Promise<boolean>, what: string) {
  for (let i = 0; i < 600; i += 1) {
    if (await condition()) return;
    await sleep(50);
  }
  throw new Error(`timed out waiting for ${what}`);
}

const createsSince = (from: number) =>
  api
    .requests()
    .slice(from)
    .filter((r) => r.method === "POST" && CREATE.test(r.path));

async function settled<T>(work: Promise<T>): Promise<{ value?: T; error?: unknown }> {
  try {
    return { value: await work };
  } catch (error) {
    return { error };
  }
}

beforeAll(async () => {
  api = await startLocalSandboxApi();
});
afterAll(async () => {
  for (const p of providers) await p.dispose();
  await api.close();
  for (const dir of dirs) await rm(dir, { recursive: true, force: true });
});

describe("one lease, two calls at once", () => {
  it("provision then destroy of one operation at once: the provision completes, then the destroy releases it", async () => {
    const w = await world();
    const provider = w.make();
    const op = operationId();
    const { leaseId } = await provider.resolveAllocation(w.profile, op);
    const [provisioned, destroyed] = await Promise.all([
      settled(provider.provision(w.profile, op, enrollingOptions())),
      settled(provider.destroy({ leaseId, profile: w.profile })),
    ]);
    expect(provisioned.value).toMatchObject({ leaseId });
    expect(destroyed.error).toBeUndefined();
    expect(await w.sandboxes()).toEqual([]);
    expect(provider.keepaliveLeases()).not.toContain(leaseId);
    expect(await provider.inspect({ leaseId, profile: w.profile })).toEqual({ status: "destroyed" });
  });

  it("destroy then provision of one operation at once: the destroyed lease is never re-created", async () => {
    const w = await world();
    const provider = w.make();
    const op = operationId();
    const { leaseId } = await provider.resolveAllocation(w.profile, op);
    const from = api.requests().length;
    const [destroyed, provisioned] = await Promise.all([
      settled(provider.destroy({ leaseId, profile: w.profile })),
      settled(provider.provision(w.profile, op, enrollingOptions())),
    ]);
    expect(destroyed.error).toBeUndefined();
    expect(provisioned.error).toBeInstanceOf(WorkerProviderError);
    expect(createsSince(from)).toEqual([]);
    expect(await w.sandboxes()).toEqual([]);
    expect(await provider.inspect({ leaseId, profile: w.profile })).toEqual({ status: "destroyed" });
  });

  it("destroy while the provision's create is in flight waits for it, then releases the sandbox it made", async () => {
    const w = await world();
    const provider = w.make({ keepaliveIntervalMs: 100 });
    const op = operationId();
    const { leaseId } = await provider.resolveAllocation(w.profile, op);
    const from = api.requests().length;
    api.faults.inject({ method: "POST", path: CREATE, delayMs: 1_500 });
    const provisioning = settled(provider.provision(w.profile, op, enrollingOptions()));
    await waitFor(() => createsSince(from).length > 0, "the create to reach the API");
    const destroyed = await settled(provider.destroy({ leaseId, profile: w.profile }));
    const provisioned = await provisioning;
    expect(destroyed.error).toBeUndefined();
    expect(provisioned.value).toMatchObject({ leaseId });
    expect(await w.sandboxes()).toEqual([]);
    expect(provider.keepaliveLeases()).not.toContain(leaseId);
  });

  it("destroy from another gateway process while a create is in flight: maintain releases what the create made", async () => {
    const w = await world();
    const provisioner = w.make();
    const destroyer = w.make();
    const op = operationId();
    const { leaseId } = await provisioner.resolveAllocation(w.profile, op);
    const from = api.requests().length;
    api.faults.inject({ method: "POST", path: CREATE, delayMs: 3_000 });
    const provisioning = settled(provisioner.provision(w.profile, op, enrollingOptions()));
    await waitFor(() => createsSince(from).length > 0, "the create to reach the API");
    // The other process finds nothing yet, so its destroy proves absence and buries the lease...
    await destroyer.destroy({ leaseId, profile: w.profile });
    await provisioning;
    expect(await w.sandboxes()).toEqual([sandboxNameOf(leaseId)]);
    // ...and the sandbox the late create made is an orphan of a destroyed lease: maintenance releases it.
    await destroyer.maintain?.({
      profiles: [w.profile],
      signal: new AbortController().signal,
      assertCurrent: () => undefined,
    });
    expect(await w.sandboxes()).toEqual([]);
    await provisioner.dispose();
  });

  it("maintain while a provision's create is in flight touches nothing of a live lease", async () => {
    const w = await world();
    const provider = w.make();
    const op = operationId();
    const { leaseId } = await provider.resolveAllocation(w.profile, op);
    const from = api.requests().length;
    api.faults.inject({ method: "POST", path: CREATE, delayMs: 1_500 });
    const provisioning = provider.provision(w.profile, op, enrollingOptions());
    await waitFor(() => createsSince(from).length > 0, "the create to reach the API");
    const maintained = provider.maintain?.({
      profiles: [w.profile],
      signal: new AbortController().signal,
      assertCurrent: () => undefined,
    });
    const [lease] = await Promise.all([provisioning, maintained]);
    // A second pass after the create landed: the sandbox exists and is listed, and is still not touched.
    await provider.maintain?.({
      profiles: [w.profile],
      signal: new AbortController().signal,
      assertCurrent: () => undefined,
    });
    expect(lease).toMatchObject({ leaseId });
    expect(await w.sandboxes()).toEqual([sandboxNameOf(leaseId)]);
    expect(
      api
        .requests()
        .slice(from)
        .filter((r) => r.method === "DELETE"),
    ).toEqual([]);
    await provider.destroy({ leaseId, profile: w.profile });
    expect(await w.sandboxes()).toEqual([]);
  });
});

describe("many provisions at once", () => {
  it("50 concurrent provisions of distinct operations make 50 sandboxes, and destroying them all leaves none", async () => {
    const w = await world();
    const provider = w.make();
    const ops = Array.from({ length: 50 }, () => operationId());
    const from = api.requests().length;
    const leases = await Promise.all(ops.map((op) => provider.provision(w.profile, op, enrollingOptions())));
    const names = leases.map((lease) => sandboxNameOf(lease.leaseId));
    expect(new Set(names).size).toBe(50);
    expect((await w.sandboxes()).sort()).toEqual([...names].sort());
    expect(createsSince(from).filter((r) => r.status === 200)).toHaveLength(50);
    await Promise.all(leases.map(({ leaseId }) => provider.destroy({ leaseId, profile: w.profile })));
    expect(await w.sandboxes()).toEqual([]);
  }, 600_000);

  it("20 concurrent provisions of one operation, from four gateway processes, converge on one sandbox", async () => {
    const w = await world();
    const gateways = [w.make(), w.make(), w.make(), w.make()];
    const op = operationId();
    const from = api.requests().length;
    const leases = await Promise.all(
      Array.from({ length: 20 }, (_, i) => gateways[i % 4]!.provision(w.profile, op, enrollingOptions())),
    );
    const leaseIds = new Set(leases.map((lease) => lease.leaseId));
    expect(leaseIds.size).toBe(1);
    const [leaseId] = [...leaseIds];
    expect(await w.sandboxes()).toEqual([sandboxNameOf(leaseId!)]);
    // Exactly one create committed; the other gateways' creates conflicted on the name and adopted it.
    expect(createsSince(from).filter((r) => r.status === 200)).toHaveLength(1);
    await gateways[0]!.destroy({ leaseId: leaseId!, profile: w.profile });
    expect(await w.sandboxes()).toEqual([]);
  }, 600_000);
});

describe("two gateway processes on one state dir", () => {
  it("a replay in one process after the other destroyed the lease is refused, not re-created", async () => {
    const w = await world();
    const first = w.make();
    const second = w.make();
    const op = operationId();
    const lease = await first.provision(w.profile, op, enrollingOptions());
    // The second process has read the ledger already (an inspect of a missing lease does), before the first
    // destroys the lease.
    const other = await second.resolveAllocation(w.profile, operationId());
    expect(await second.inspect({ leaseId: other.leaseId, profile: w.profile })).toEqual({ status: "unknown" });
    await first.destroy({ leaseId: lease.leaseId, profile: w.profile });
    const from = api.requests().length;
    await expect(second.provision(w.profile, op, enrollingOptions())).rejects.toBeInstanceOf(WorkerProviderError);
    expect(createsSince(from)).toEqual([]);
    expect(await w.sandboxes()).toEqual([]);
    expect(await second.inspect({ leaseId: lease.leaseId, profile: w.profile })).toEqual({ status: "destroyed" });
  });
});
