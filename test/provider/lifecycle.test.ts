// Provider behaviour beyond the shared contract, against the emulator with fault injection: keepalive,
// retries, errors that must throw, cleanup that cannot be proven, snapshot ownership, maintenance authority.
import { setTimeout as sleep } from "node:timers/promises";
import { Sandbox, Snapshot } from "@vercel/sandbox";
import { type WorkerProfile, WorkerProviderError } from "openclaw/plugin-sdk/plugin-entry";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { enrollingOptions, fakeEnrollment, operationId } from "../../src/conformance/fixtures.js";
import { type LocalSandboxApi, startLocalSandboxApi } from "../../src/emulator/index.js";
import { sandboxNameOf } from "../../src/provider/allocation.js";
import { createVercelSandboxProvider, type VercelSandboxProviderOptions } from "../../src/provider/index.js";

let api: LocalSandboxApi;
let profile: WorkerProfile;
const connection = () => ({ ...api.credentials, fetch: api.fetch });
const providers: Array<{ dispose(): Promise<void> }> = [];

function makeProvider(options: Partial<VercelSandboxProviderOptions> = {}) {
  const provider = createVercelSandboxProvider({
    env: { LIFECYCLE_TOKEN: api.credentials.token },
    logger: { warn: () => undefined },
    scope: "lifecycle",
    enroll: async ({ enrollment }) => enrollment.waitForDeviceId(),
    ...options,
  });
  providers.push(provider);
  return provider;
}

async function waitFor(condition: () => boolean | Promise<boolean>, what: string) {
  for (let i = 0; i < 200; i += 1) {
    if (await condition()) return;
    await sleep(50);
  }
  throw new Error(`timed out waiting for ${what}`);
}

beforeAll(async () => {
  api = await startLocalSandboxApi();
  profile = {
    apiUrl: api.url,
    tokenEnv: "LIFECYCLE_TOKEN",
    teamId: api.credentials.teamId,
    projectId: api.credentials.projectId,
    timeout: "2m",
  };
});
afterAll(async () => {
  for (const p of providers) await p.dispose();
  await api.close();
});

describe("keepalive", () => {
  it("extends a running lease, ends without waking it once stopped, and stays off after destroy", async () => {
    const provider = makeProvider({ keepaliveIntervalMs: 100 });
    const { leaseId } = await provider.provision(profile, operationId(), enrollingOptions());
    const extends_ = () => api.requests().filter((r) => r.path.endsWith("/extend-timeout") && r.status === 200);
    await waitFor(() => extends_().length >= 2, "two keepalive extensions");

    await (await Sandbox.get({ ...connection(), name: sandboxNameOf(leaseId) })).stop();
    const afterStop = api.requests().length;
    await sleep(500);
    const since = api.requests().slice(afterStop);
    expect(since.filter((r) => r.path.endsWith(sandboxNameOf(leaseId))).length).toBeLessThanOrEqual(1);
    expect(since.filter((r) => r.path.endsWith("/extend-timeout"))).toEqual([]);
    expect((await Sandbox.get({ ...connection(), name: sandboxNameOf(leaseId) })).status).toBe("stopped");

    await provider.destroy({ leaseId, profile });
    const afterDestroy = api.requests().length;
    await sleep(300);
    expect(api.requests().slice(afterDestroy)).toEqual([]);
  });

  it("an active inspect re-arms the keepalive in a fresh gateway process", async () => {
    const first = makeProvider();
    const op = operationId();
    const { leaseId } = await first.provision(profile, op, enrollingOptions());
    await first.dispose();
    const restarted = makeProvider({ keepaliveIntervalMs: 100 });
    const before = api.requests().length;
    expect(await restarted.inspect({ leaseId, profile })).toMatchObject({ status: "active" });
    await waitFor(
      () =>
        api
          .requests()
          .slice(before)
          .some((r) => r.path.endsWith("/extend-timeout")),
      "an extension after inspect",
    );
    await restarted.destroy({ leaseId, profile });
  });
});

describe("failures", () => {
  it("inspect throws on an authorization failure instead of calling the lease unknown", async () => {
    const provider = makeProvider();
    const { leaseId } = await provider.provision(profile, operationId(), enrollingOptions());
    api.faults.inject({ method: "GET", path: sandboxNameOf(leaseId), status: 401 });
    const error = await provider.inspect({ leaseId, profile }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(Error);
    expect(error).not.toBeInstanceOf(WorkerProviderError);
    expect((error as Error).message).toContain("401");
    await provider.destroy({ leaseId, profile });
  });

  it("a transient lookup failure that outlasts the SDK's own retries is retried", async () => {
    const provider = makeProvider();
    const { leaseId } = await provider.provision(profile, operationId(), enrollingOptions());
    api.faults.inject({ method: "GET", path: sandboxNameOf(leaseId), status: 503, times: 3 });
    expect(await provider.inspect({ leaseId, profile })).toMatchObject({ status: "active" });
    const failed = api.requests().filter((r) => r.path.endsWith(sandboxNameOf(leaseId)) && r.status === 503);
    expect(failed).toHaveLength(3);
    await provider.destroy({ leaseId, profile });
  }, 30_000);

  it("when release after a failed enrollment cannot be proven, provision reports cleanup as indeterminate", async () => {
    const provider = makeProvider({
      enroll: async () => {
        throw new Error("node never connected");
      },
    });
    const op = operationId();
    const { leaseId } = await provider.resolveAllocation(profile, op);
    api.faults.inject({ method: "DELETE", path: sandboxNameOf(leaseId), status: 403 });
    const error = await provider.provision(profile, op, enrollingOptions()).catch((e: unknown) => e);
    expect(WorkerProviderError.isCleanupIndeterminate(error)).toBe(true);
    expect((error as { leaseId: string }).leaseId).toBe(leaseId);
    expect(String((error as { provisionError: Error }).provisionError.message)).toContain("node never connected");
    // Core later calls destroy for the pending teardown; it proves absence once the API cooperates.
    await provider.destroy({ leaseId, profile });
    await expect(Sandbox.get({ ...connection(), name: sandboxNameOf(leaseId) })).rejects.toThrow(/404/);
  });
});

describe("gateway shutdown", () => {
  it("an enrollment ended by gateway shutdown keeps the sandbox, and the restarted gateway adopts it", async () => {
    const shutdown = new AbortController();
    const op = operationId();
    const stopping = makeProvider({
      enroll: async ({ enrollment }) => {
        shutdown.abort(new Error("gateway is stopping"));
        enrollment.signal?.throwIfAborted();
        return "never";
      },
    });
    const options = {
      ...enrollingOptions(),
      beginNodeEnrollment: async () => ({ ...fakeEnrollment(), signal: shutdown.signal }),
    };
    await expect(stopping.provision(profile, op, options)).rejects.toThrow("gateway is stopping");
    const { leaseId } = await stopping.resolveAllocation(profile, op);
    await expect(Sandbox.get({ ...connection(), name: sandboxNameOf(leaseId) })).resolves.toBeTruthy();

    const restarted = makeProvider();
    const before = api.requests().filter((r) => r.method === "POST" && /^\/v[23]\/sandboxes$/.test(r.path));
    expect((await restarted.provision(profile, op, enrollingOptions())).leaseId).toBe(leaseId);
    const creates = api.requests().filter((r) => r.method === "POST" && /^\/v[23]\/sandboxes$/.test(r.path));
    expect(creates.slice(before.length).every((r) => r.status === 409)).toBe(true);
    await restarted.destroy({ leaseId, profile });
  });
});

describe("snapshots", () => {
  it("destroy deletes the lease's snapshots except those a warm image retains", async () => {
    let retained = new Set<string>();
    const provider = makeProvider({ retainedSnapshots: async () => retained });
    const { leaseId } = await provider.provision(profile, operationId(), enrollingOptions());
    const sandbox = await Sandbox.get({ ...connection(), name: sandboxNameOf(leaseId) });
    const kept = await sandbox.snapshot();
    const dropped = await sandbox.snapshot();
    retained = new Set([kept.snapshotId]);
    await provider.destroy({ leaseId, profile });
    // Vercel keeps answering for a deleted snapshot, with status "deleted".
    expect((await Snapshot.get({ ...connection(), snapshotId: kept.snapshotId })).status).not.toBe("deleted");
    expect((await Snapshot.get({ ...connection(), snapshotId: dropped.snapshotId })).status).toBe("deleted");
  });
});

describe("maintenance", () => {
  it("checks its authority before any side effect and then deletes nothing", async () => {
    const provider = makeProvider();
    const op = operationId();
    const { leaseId } = await provider.provision(profile, op, enrollingOptions());
    await provider.destroy({ leaseId, profile });
    await makeProvider().provision(profile, op, enrollingOptions());
    const stale = () => {
      throw new Error("configuration changed");
    };
    await expect(
      provider.maintain?.({ profiles: [profile], signal: new AbortController().signal, assertCurrent: stale }),
    ).rejects.toThrow("configuration changed");
    await expect(Sandbox.get({ ...connection(), name: sandboxNameOf(leaseId) })).resolves.toBeTruthy();
    await provider.maintain?.({
      profiles: [profile],
      signal: new AbortController().signal,
      assertCurrent: () => undefined,
    });
    await expect(Sandbox.get({ ...connection(), name: sandboxNameOf(leaseId) })).rejects.toThrow(/404/);
  });
});
