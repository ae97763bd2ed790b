// The prepared-pool members OpenClaw 2026.9.4+ calls for ready workers, on their own: the preparation target
// and the idle timeout read from the profile alone, the demand note touching only the lease's own images (a real
// ImageStore), the budgeted transport handed to core's prepare only when core asked for a prepared workspace,
// and a replay of an enrolled worker reading that workspace on its box (the emulator). The real 2026.9.6
// gateway spec (test/gateway/ready-workers.test.ts) runs them end to end.
import { Sandbox } from "@vercel/sandbox";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { enrollingOptions, operationId } from "../../src/conformance/fixtures.js";
import { type LocalSandboxApi, startLocalSandboxApi } from "../../src/emulator/index.js";
import type { ImageRecord } from "../../src/preparation/index.js";
import { ImageStore } from "../../src/preparation/index.js";
import { sandboxNameOf } from "../../src/provider/allocation.js";
import { createVercelSandboxProvider } from "../../src/provider/index.js";
import {
  resolvePreparationTarget,
  resolvePreparedIdleTimeoutMs,
} from "../../src/provider/members/preparation-target.js";
import { createNotePreparedDemand, PreparedDemandError } from "../../src/provider/members/prepared-demand.js";
import {
  enrolledScripts,
  type PreparedProject,
  PreparedWorkspaceUnavailableError,
  SETUP_BUDGET_MS,
  withPreparedWorkspaces,
} from "../../src/provider/members/prepared-provision.js";
import { createParts } from "../../src/provider/parts.js";
import type { EnrollmentContext } from "../../src/provider/provider.js";

describe("resolvePreparationTarget", () => {
  it("is the profile's vCPU class on linux/x64 when it keeps warm images", () => {
    expect(resolvePreparationTarget({ vcpus: 4 })).toEqual({ machineClass: "vcpu-4", platform: "linux", arch: "x64" });
    expect(resolvePreparationTarget({})).toEqual({ machineClass: "vcpu-2", platform: "linux", arch: "x64" });
  });

  it("follows a placement's machine class and operating system", () => {
    expect(resolvePreparationTarget({ vcpus: 4 }, "vcpu-8", "linux")?.machineClass).toBe("vcpu-8");
    expect(resolvePreparationTarget({}, "vcpu-3")).toBeUndefined();
    expect(resolvePreparationTarget({}, undefined, "windows")).toBeUndefined();
  });

  it("is undefined without warm images or for an invalid profile, so core keeps no ready worker", () => {
    expect(resolvePreparationTarget({ warmImage: false })).toBeUndefined();
    expect(resolvePreparationTarget({ vcpus: 3 })).toBeUndefined();
    expect(resolvePreparationTarget({ unknownKey: true })).toBeUndefined();
  });
});

describe("resolvePreparedIdleTimeoutMs", () => {
  it("is the profile's timeout, 30 minutes by default", () => {
    expect(resolvePreparedIdleTimeoutMs({ timeout: "10m" })).toBe(600_000);
    expect(resolvePreparedIdleTimeoutMs({})).toBe(30 * 60_000);
  });

  it("is undefined without warm images, with a worker cap, or for an invalid profile", () => {
    expect(resolvePreparedIdleTimeoutMs({ warmImage: false })).toBeUndefined();
    expect(resolvePreparedIdleTimeoutMs({ maxWorkers: 2 })).toBeUndefined();
    expect(resolvePreparedIdleTimeoutMs({ timeout: "1s" })).toBeUndefined();
  });
});

function image(snapshotId: string, sourceLeaseId: string, lastUsedAt: number): ImageRecord {
  return {
    snapshotId,
    key: `key-${snapshotId}`,
    profileKey: "profile",
    projectKey: "a".repeat(64),
    baseCommit: "b".repeat(40),
    recipeIdentity: "none",
    recipeSource: "none",
    sourceLeaseId,
    createdAt: 1_000,
    lastUsedAt,
    state: "ready",
  };
}

describe("notePreparedDemand", () => {
  const lease = "vsb_0123456789abcdef01234567";
  const other = "vsb_fedcba9876543210fedcba98";
  const demand = { preparationKey: "c".repeat(64), demandAtMs: 50_000 };

  async function storeWith() {
    const images = ImageStore.inDirectory(undefined);
    await images.recordImage(image("snap_selected", other, 2_000));
    await images.recordImage(image("snap_produced", lease, 3_000));
    await images.recordImage(image("snap_unrelated", other, 4_000));
    await images.recordChoice({
      leaseId: lease,
      key: "key-snap_selected",
      profileKey: "profile",
      choice: { kind: "image", snapshotId: "snap_selected" },
      recordedAt: 1_500,
      phase: "enrolled",
    });
    return images;
  }

  const lastUsed = async (images: ImageStore) =>
    Object.fromEntries((await images.images()).map((i) => [i.snapshotId, i.lastUsedAt]));

  it("records the demand on the image the lease started from and the one it captured, and on no other", async () => {
    const images = await storeWith();
    await createNotePreparedDemand({ images })({ leaseId: lease, profile: {} }, demand);
    expect(await lastUsed(images)).toEqual({ snap_selected: 50_000, snap_produced: 50_000, snap_unrelated: 4_000 });
  });

  it("never moves an image's use back in time, and a lease without images changes nothing", async () => {
    const images = await storeWith();
    const note = createNotePreparedDemand({ images });
    await note({ leaseId: lease, profile: {} }, { ...demand, demandAtMs: 2_500 });
    await note({ leaseId: "vsb_000000000000000000000000", profile: {} }, demand);
    expect(await lastUsed(images)).toEqual({ snap_selected: 2_500, snap_produced: 3_000, snap_unrelated: 4_000 });
  });

  it("refuses a demand without a lease, a preparation or a valid time", async () => {
    const note = createNotePreparedDemand({ images: await storeWith() });
    await expect(note({ leaseId: "", profile: {} }, demand)).rejects.toThrow(PreparedDemandError);
    await expect(note({ leaseId: lease, profile: {} }, { ...demand, preparationKey: "" })).rejects.toThrow(
      PreparedDemandError,
    );
    await expect(note({ leaseId: lease, profile: {} }, { ...demand, demandAtMs: -1 })).rejects.toThrow(
      PreparedDemandError,
    );
    await expect(note({ leaseId: lease, profile: {} }, { ...demand, demandAtMs: 1.5 })).rejects.toThrow(
      PreparedDemandError,
    );
  });
});

describe("withPreparedWorkspaces", () => {
  type Transport = Parameters<PreparedProject["prepare"]>[0] & {
    runScriptWithBudget?: (createScript: (timeoutMs: number) => string, signal: AbortSignal) => Promise<string>;
  };
  const lease = { leaseId: "vsb_0123456789abcdef01234567", sharedHost: false, node: { deviceId: "d" } };

  /**
   * A project whose prepare and inspectPreparedWorkspace record what they were handed, and a provision that
   * prepares (or, `adopts: true`, returns without preparing, as a replay of an enrolled worker does).
   */
  function harness(preparation: PreparedProject["preparation"], adopts = false) {
    const ran: string[] = [];
    const inspected: string[] = [];
    let seen: Transport | undefined;
    const project = {
      key: "a".repeat(64),
      baseCommit: "b".repeat(40),
      signal: new AbortController().signal,
      assertCurrent: () => undefined,
      prepare: async (transport: Transport) => {
        seen = transport;
        return { seedKey: "seed", cacheHit: false };
      },
      inspectPreparedWorkspace: async ({ runScript }: { runScript: Transport["runScript"] }) => {
        inspected.push(await runScript("inspect", new AbortController().signal));
      },
      ...(preparation ? { preparation } : {}),
    } as unknown as PreparedProject;
    const transport: Transport = {
      runScript: async (script) => {
        ran.push(script);
        return "{}";
      },
      upload: async () => undefined,
    };
    const lookups: string[] = [];
    let passed: unknown;
    const provision = withPreparedWorkspaces(
      async (_profile, _operationId, options) => {
        passed = options;
        if (!adopts) await options?.project?.prepare(transport);
        return lease;
      },
      async (_profile, operationId) => {
        lookups.push(operationId);
        return async (script) => `ran ${script} on the enrolled box`;
      },
    );
    return { ran, inspected, lookups, project, provision, seen: () => seen, passed: () => passed, transport };
  }
  const preparation = { key: "c".repeat(64), cacheKey: "d".repeat(64), purpose: "reserve" as const, demandAtMs: 1 };

  it("gives core's prepare a runScriptWithBudget that renders with the command's budget and runs it", async () => {
    const h = harness(preparation);
    expect(await h.provision({}, "op", { project: h.project })).toBe(lease);
    const budgeted = h.seen()?.runScriptWithBudget;
    expect(budgeted).toBeTypeOf("function");
    expect(await budgeted?.((ms) => `setup within ${ms}`, new AbortController().signal)).toBe("{}");
    expect(h.ran).toEqual([`setup within ${SETUP_BUDGET_MS}`]);
    const project = (h.passed() as { project: PreparedProject }).project;
    expect(project.preparation).toEqual(h.project.preparation);
    expect(project.key).toBe(h.project.key);
    expect(h.inspected).toEqual([]);
    expect(h.lookups).toEqual([]);
  });

  it("a provision that adopted an enrolled worker without preparing reads its prepared workspace on that box", async () => {
    const h = harness(preparation, true);
    expect(await h.provision({}, "op-replay", { project: h.project })).toBe(lease);
    expect(h.lookups).toEqual(["op-replay"]);
    expect(h.inspected).toEqual(["ran inspect on the enrolled box"]);
  });

  it("passes a project without preparation (every 2026.9.2 provision) through untouched", async () => {
    for (const adopts of [false, true]) {
      const h = harness(undefined, adopts);
      const options = { project: h.project };
      await h.provision({}, "op", options);
      expect(h.passed()).toBe(options);
      expect(h.seen()).toBe(adopts ? undefined : h.transport);
      expect(h.lookups).toEqual([]);
      expect(h.inspected).toEqual([]);
    }
  });
});

describe("enrolledScripts", () => {
  let api: LocalSandboxApi;
  const providers: Array<{ dispose(): Promise<void> }> = [];
  beforeAll(async () => {
    api = await startLocalSandboxApi();
  });
  afterAll(async () => {
    for (const p of providers) await p.dispose();
    await api.close();
  });

  it("runs a script on the lease's running sandbox, and refuses one that is not running", async () => {
    const options = {
      env: { READY_TOKEN: api.credentials.token },
      logger: { warn: () => undefined },
      scope: "ready",
      enroll: async ({ enrollment }: EnrollmentContext) => enrollment.waitForDeviceId(),
    };
    const profile = {
      apiUrl: api.url,
      tokenEnv: "READY_TOKEN",
      teamId: api.credentials.teamId,
      projectId: api.credentials.projectId,
      warmImage: false,
    };
    const provider = createVercelSandboxProvider(options);
    providers.push(provider);
    const op = operationId();
    const { leaseId } = await provider.provision(profile, op, enrollingOptions());
    const scripts = enrolledScripts(createParts(options));
    const runScript = await scripts(profile, op);
    expect(await runScript("echo prepared-$((6 * 7))", new AbortController().signal)).toBe("prepared-42\n");
    await (await Sandbox.get({ ...api.credentials, fetch: api.fetch, name: sandboxNameOf(leaseId) })).stop();
    await expect(scripts(profile, op)).rejects.toThrow(PreparedWorkspaceUnavailableError);
    await provider.destroy({ leaseId, profile });
  });
});

describe("the assembled provider", () => {
  it("offers the prepared-pool members next to supportsProjectPreparation", () => {
    const provider = createVercelSandboxProvider();
    expect(provider.resolvePreparationTarget({})).toEqual({ machineClass: "vcpu-2", platform: "linux", arch: "x64" });
    expect(provider.resolvePreparedIdleTimeoutMs({ warmImage: false })).toBeUndefined();
    expect(provider.notePreparedDemand).toBeTypeOf("function");
    expect(provider.supportsProjectPreparation?.({})).toBe(true);
  });
});
