// The WorkerProvider conformance suite: the contract OpenClaw 2026.9.2 core relies on, as vitest specs.
// It runs against any target that can build a provider and list sandboxes: the embedded emulator in CI, or a
// real Vercel project with VERCEL_SANDBOX_LIVE=1. Fault-injection specs run only where the target can inject.
import { type WorkerProfile, WorkerProviderError } from "openclaw/plugin-sdk/plugin-entry";
import { afterAll, beforeAll, describe, expect, it, type TestContext } from "vitest";
import type { EnrollmentContext, VercelSandboxProvider, VercelSandboxProviderOptions } from "../provider/index.js";
import { sandboxNameOf } from "../provider/index.js";
import { BOOTSTRAP_TOKEN, enrollingOptions, operationId, SETUP_CODE } from "./fixtures.js";

const NO_REQUEST_COUNT =
  "the target cannot count API requests (a live Vercel project has no request log): give it requestCount() to run this spec";

export interface ConformanceTarget {
  /** A fresh provider; several instances stand for several gateway processes or a restart. */
  createProvider(options?: Partial<VercelSandboxProviderOptions>): VercelSandboxProvider;
  /** Profile settings that reach the target's Vercel project. */
  profile: WorkerProfile;
  /** Names of the sandboxes that exist now, their status and (if the target reports it) their vCPUs. */
  sandboxes(): Promise<Array<{ name: string; status: string; vcpus?: number }>>;
  /** Stops a sandbox's session the way a session timeout would. */
  stopSandbox(name: string): Promise<void>;
  /**
   * Requests the target's API has answered so far; absent on live targets. The specs that count requests
   * ("… makes no request") are reported as skipped, with the reason, on a target without it.
   */
  requestCount?(): number;
  /** Make the next sandbox create commit and then lose its response; absent on live targets (spec skipped). */
  dropNextCreateResponse?(): void;
  /** The token the provider authenticates with, to prove it never leaks. */
  secretToken?: string;
  close(): Promise<void>;
}

export function defineConformanceSuite(label: string, makeTarget: () => Promise<ConformanceTarget>): void {
  describe(`WorkerProvider conformance: ${label}`, () => {
    let target: ConformanceTarget;
    let provider: VercelSandboxProvider;
    const cleanup: Array<() => Promise<void>> = [];

    beforeAll(async () => {
      target = await makeTarget();
      provider = target.createProvider({ enroll: async ({ enrollment }) => enrollment.waitForDeviceId() });
    });
    afterAll(async () => {
      for (const task of cleanup) await task().catch(() => undefined);
      await provider?.dispose();
      await target?.close();
    });

    /** Provision a fresh operation and register its destroy for the end of the suite. */
    async function provisionFresh(p = provider, options = enrollingOptions()) {
      const op = operationId();
      const lease = await p.provision(target.profile, op, options);
      cleanup.push(() => provider.destroy({ leaseId: lease.leaseId, profile: target.profile }));
      return { op, lease };
    }
    const exists = async (leaseId: string) =>
      (await target.sandboxes()).filter((s) => s.name === sandboxNameOf(leaseId)).length;

    /** The target's request counter; skips the running spec, saying why, on a target that cannot count. */
    function requestCounter(context: TestContext): () => number {
      const count = target.requestCount?.bind(target);
      if (!count) return context.skip(NO_REQUEST_COUNT);
      return count;
    }

    it("resolves the same allocation for the same operation", async () => {
      const op = operationId();
      const a = await provider.resolveAllocation(target.profile, op);
      const b = await target.createProvider().resolveAllocation(target.profile, op);
      expect(a).toEqual(b);
      expect(a.sharedHost).toBe(false);
      expect((await provider.resolveAllocation(target.profile, operationId())).leaseId).not.toBe(a.leaseId);
    });

    it("resolveAllocation makes no request", async (context) => {
      const requests = requestCounter(context);
      const before = requests();
      await provider.resolveAllocation(target.profile, operationId());
      await target.createProvider().resolveAllocation(target.profile, operationId());
      expect(requests()).toBe(before);
    });

    it("provisions one sandbox, enrolls the gateway's node on it once it exists, and leases that node", async () => {
      const seen: Array<{ sandboxes: number; context: EnrollmentContext; deviceId: string }> = [];
      const observing = target.createProvider({
        enroll: async (context: EnrollmentContext) => {
          const sandboxes = await exists(context.leaseId);
          const deviceId = await context.enrollment.waitForDeviceId();
          seen.push({ sandboxes, context, deviceId });
          return deviceId;
        },
      });
      const options = enrollingOptions();
      const { lease } = await provisionFresh(observing, options);
      await observing.dispose();
      // The gateway's enrollment reached the enroller unchanged, on this lease's sandbox, after it existed...
      const [issued] = options.issued();
      expect(options.begun()).toBe(1);
      expect(seen).toHaveLength(1);
      const [{ sandboxes, context, deviceId }] = seen as [(typeof seen)[number]];
      expect(sandboxes).toBe(1);
      expect(context.enrollment).toBe(issued?.enrollment);
      expect(context.leaseId).toBe(lease.leaseId);
      expect(context.sandbox.name).toBe(sandboxNameOf(lease.leaseId));
      // ...and the lease names the node that enrollment produced: that enrollment's own (fresh) device id.
      expect(deviceId).toBe(issued?.deviceId);
      expect(lease).toEqual({ leaseId: lease.leaseId, sharedHost: false, node: { deviceId } });
      expect(Object.keys(lease.node ?? {})).toEqual(["deviceId"]);
    });

    it("replay of a known operation adopts the sandbox and creates nothing", async () => {
      const { op, lease } = await provisionFresh();
      const again = await provider.provision(target.profile, op, enrollingOptions());
      const restarted = target.createProvider({ enroll: async ({ enrollment }) => enrollment.waitForDeviceId() });
      const afterRestart = await restarted.provision(target.profile, op, enrollingOptions());
      await restarted.dispose();
      expect(again.leaseId).toBe(lease.leaseId);
      expect(afterRestart.leaseId).toBe(lease.leaseId);
      expect(await exists(lease.leaseId)).toBe(1);
    });

    it("concurrent provisions of one operation from two gateways converge on one sandbox", async () => {
      const op = operationId();
      const other = target.createProvider({ enroll: async ({ enrollment }) => enrollment.waitForDeviceId() });
      const leases = await Promise.all([
        provider.provision(target.profile, op, enrollingOptions()),
        provider.provision(target.profile, op, enrollingOptions()),
        other.provision(target.profile, op, enrollingOptions()),
      ]);
      await other.dispose();
      cleanup.push(() => provider.destroy({ leaseId: leases[0].leaseId, profile: target.profile }));
      expect(new Set(leases.map((l) => l.leaseId)).size).toBe(1);
      expect(await exists(leases[0].leaseId)).toBe(1);
    });

    it("a create whose response was lost is adopted on the next attempt", async (context) => {
      if (!target.dropNextCreateResponse) {
        return context.skip("the target cannot drop a create's response (a live Vercel project cannot inject faults)");
      }
      const op = operationId();
      const { leaseId } = await provider.resolveAllocation(target.profile, op);
      target.dropNextCreateResponse();
      let first: unknown;
      try {
        await provider.provision(target.profile, op, enrollingOptions());
      } catch (error) {
        first = error;
      }
      cleanup.push(() => provider.destroy({ leaseId, profile: target.profile }));
      const lease = await provider.provision(target.profile, op, enrollingOptions());
      expect(lease.leaseId).toBe(leaseId);
      expect(await exists(leaseId)).toBe(1);
      // Either the SDK's own retry already adopted it (no error), or the first attempt failed retryably: never
      // with the permanent WorkerProviderError.
      expect(first instanceof WorkerProviderError, `first attempt: ${String(first)}`).toBe(false);
    });

    it("inspect reports active, then dormant once stopped, without waking the sandbox", async () => {
      const { lease } = await provisionFresh();
      expect(await provider.inspect({ leaseId: lease.leaseId, profile: target.profile })).toEqual({
        status: "active",
        sharedHost: false,
      });
      await target.stopSandbox(sandboxNameOf(lease.leaseId));
      expect(await provider.inspect({ leaseId: lease.leaseId, profile: target.profile })).toEqual({
        status: "dormant",
      });
      await provider.renew(lease.leaseId);
      const after = (await target.sandboxes()).find((s) => s.name === sandboxNameOf(lease.leaseId));
      expect(after?.status).toBe("stopped");
    });

    it("inspect of a stopped sandbox is one request", async (context) => {
      const requests = requestCounter(context);
      const { lease } = await provisionFresh();
      await target.stopSandbox(sandboxNameOf(lease.leaseId));
      const before = requests();
      expect(await provider.inspect({ leaseId: lease.leaseId, profile: target.profile })).toEqual({
        status: "dormant",
      });
      expect(requests()).toBe(before + 1);
    });

    it("inspect of a lease that was never created is unknown, never destroyed", async () => {
      const { leaseId } = await provider.resolveAllocation(target.profile, operationId());
      expect(await provider.inspect({ leaseId, profile: target.profile })).toEqual({ status: "unknown" });
    });

    it("destroy proves absence, is idempotent, and inspect then reports destroyed", async () => {
      const { lease } = await provisionFresh();
      await provider.destroy({ leaseId: lease.leaseId, profile: target.profile });
      expect(await exists(lease.leaseId)).toBe(0);
      await provider.destroy({ leaseId: lease.leaseId, profile: target.profile });
      expect(await provider.inspect({ leaseId: lease.leaseId, profile: target.profile })).toEqual({
        status: "destroyed",
      });
    });

    it("destroy of a lease whose provision never ran resolves and leaves nothing", async () => {
      const { leaseId } = await provider.resolveAllocation(target.profile, operationId());
      await provider.destroy({ leaseId, profile: target.profile });
      expect(await exists(leaseId)).toBe(0);
    });

    it.each([
      [{ vcpus: 3 }, "vcpus"],
      [{ bogus: true }, "bogus"],
      [{ timeout: "10s" }, "timeout"],
      [{ networkPolicy: { allow: ["not a domain"] } }, "networkPolicy"],
      [{ tags: { "openclaw-scope": "mine" } }, "tags"],
    ])("invalid settings %j are rejected naming %s", async (bad, key) => {
      const profile = { ...target.profile, ...bad } as WorkerProfile;
      const error = await provider.provision(profile, operationId(), enrollingOptions()).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(WorkerProviderError);
      expect((error as Error).message).toContain(key);
      await expect(provider.resolveAllocation(profile, operationId())).rejects.toBeInstanceOf(WorkerProviderError);
    });

    const rejectUnknownChoices = async () => {
      await expect(
        provider.provision(target.profile, operationId(), enrollingOptions({ machineClass: "gpu-huge" })),
      ).rejects.toBeInstanceOf(WorkerProviderError);
      await expect(
        provider.provision(target.profile, operationId(), {
          ...enrollingOptions(),
          executionMode: "teleport" as "worker-turn",
        }),
      ).rejects.toBeInstanceOf(WorkerProviderError);
    };

    it("rejects an unknown machine class or execution mode", rejectUnknownChoices);

    it("invalid settings, an unknown machine class or mode, and an aborted signal make no request", async (context) => {
      const requests = requestCounter(context);
      const before = requests();
      const profile = { ...target.profile, vcpus: 3 } as WorkerProfile;
      await expect(provider.provision(profile, operationId(), enrollingOptions())).rejects.toBeInstanceOf(
        WorkerProviderError,
      );
      await rejectUnknownChoices();
      const signal = AbortSignal.abort();
      await expect(provider.provision(target.profile, operationId(), enrollingOptions({ signal }))).rejects.toThrow();
      expect(requests()).toBe(before);
    });

    it("a machine class maps to the sandbox's vCPUs", async (context) => {
      const options = await provider.listMachineOptions?.(target.profile);
      expect(options?.filter((o) => o.default)).toHaveLength(1);
      const { lease } = await provisionFresh(provider, enrollingOptions({ machineClass: "vcpu-4" }));
      const sandbox = (await target.sandboxes()).find((s) => s.name === sandboxNameOf(lease.leaseId));
      expect(sandbox, "the provisioned sandbox is listed").toBeDefined();
      if (sandbox?.vcpus === undefined) {
        return context.skip("the target's sandboxes() does not report vcpus: add `vcpus` to run this check");
      }
      expect(sandbox.vcpus).toBe(4);
    });

    it("a failed enrollment releases the sandbox and its error carries no secret", async () => {
      const op = operationId();
      const failing = target.createProvider({
        enroll: async () => {
          throw new Error(`node refused setup code ${SETUP_CODE} with bootstrap Bearer ${BOOTSTRAP_TOKEN}`);
        },
      });
      const error = (await failing.provision(target.profile, op, enrollingOptions()).catch((e: unknown) => e)) as Error;
      const { leaseId } = await failing.resolveAllocation(target.profile, op);
      await failing.dispose();
      expect(error).toBeInstanceOf(Error);
      expect(WorkerProviderError.isCleanupIndeterminate(error)).toBe(false);
      for (const secret of [SETUP_CODE, BOOTSTRAP_TOKEN, target.secretToken].filter(Boolean)) {
        expect(`${error.message} ${error.stack}`).not.toContain(secret);
      }
      expect(await exists(leaseId)).toBe(0);
    });

    it("an already-aborted signal rejects and creates nothing", async () => {
      const op = operationId();
      const signal = AbortSignal.abort();
      await expect(provider.provision(target.profile, op, enrollingOptions({ signal }))).rejects.toThrow();
      const { leaseId } = await provider.resolveAllocation(target.profile, op);
      expect(await exists(leaseId)).toBe(0);
    });

    it("an abort during enrollment settles, releases the sandbox and rejects", async () => {
      const controller = new AbortController();
      const op = operationId();
      const aborting = target.createProvider({
        enroll: async ({ signal }) => {
          controller.abort(new Error("stopped by the operator"));
          signal?.throwIfAborted();
          return "never";
        },
      });
      await expect(
        aborting.provision(target.profile, op, enrollingOptions({ signal: controller.signal })),
      ).rejects.toThrow(/stopped by the operator/);
      const { leaseId } = await aborting.resolveAllocation(target.profile, op);
      await aborting.dispose();
      expect(await exists(leaseId)).toBe(0);
    });

    it("declares bounded timeouts and the contract's flags", () => {
      for (const ms of [
        provider.resolveProvisionTimeoutMs?.(target.profile),
        provider.resolveDestroyTimeoutMs?.(target.profile),
      ]) {
        expect(Number.isSafeInteger(ms)).toBe(true);
        expect(ms).toBeGreaterThan(300_000);
        expect(ms).toBeLessThanOrEqual(2_147_000_000);
      }
      expect(provider.supportedExecutionModes).toEqual(["worker-turn", "remote-exec"]);
      expect(provider.requiresNodeEnrollment).toBe(true);
    });

    it("maintenance releases a destroyed lease's sandbox that reappeared, and nothing else", async () => {
      const { lease: kept } = await provisionFresh();
      const { op, lease: gone } = await provisionFresh();
      await provider.destroy({ leaseId: gone.leaseId, profile: target.profile });
      // A late replay from another gateway process (no tombstone there) re-creates the destroyed lease.
      const late = target.createProvider({ enroll: async ({ enrollment }) => enrollment.waitForDeviceId() });
      await late.provision(target.profile, op, enrollingOptions());
      await late.dispose();
      expect(await exists(gone.leaseId)).toBe(1);
      await provider.maintain?.({
        profiles: [target.profile],
        signal: new AbortController().signal,
        assertCurrent: () => undefined,
      });
      expect(await exists(gone.leaseId)).toBe(0);
      expect(await exists(kept.leaseId)).toBe(1);
    });
  });
}
