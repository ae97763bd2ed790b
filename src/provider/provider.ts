// The `vercel-sandbox` WorkerProvider, assembled from single-purpose parts: settings (pure), allocation
// (pure), the Vercel client seam, release-with-proof, the lease ledger and the keepalive. Every failure is
// mapped onto the contract: WorkerProviderError only before allocation or after proven release,
// cleanupIndeterminate when release could not be proven, plain (retryable) errors otherwise.
import { setTimeout as sleep } from "node:timers/promises";
import type { WorkerLease, WorkerLeaseStatus, WorkerProvider } from "openclaw/plugin-sdk/plugin-entry";
import { WorkerProviderError } from "openclaw/plugin-sdk/plugin-entry";
import {
  type Allocation,
  AllocationError,
  allocate,
  effectiveScope,
  leaseIdOf,
  sandboxNameOf,
  TAG_SCOPE,
} from "./allocation.js";
import {
  BackendUnavailableError,
  type SandboxBox,
  type SandboxHandle,
  VercelClient,
  type VercelClientOptions,
  type VercelProject,
} from "./client.js";
import { NodeEnroller as BootstrapEnroller, type NodeEnrollerOptions } from "./enrollment/index.js";
import { extensionMs, Keepalive, type TickOutcome } from "./keepalive.js";
import { LeaseLedger } from "./ledger.js";
import { createRequest, egressPolicy, gatewayHostOf, machineOptions, vcpusOfMachineClass } from "./policy.js";
import { forgetSecrets, messageOf, registerSecret } from "./redact.js";
import { type AbsenceProof, DEFAULT_ABSENCE_PROOF, type RetainedSnapshots, releaseSandbox } from "./release.js";
import { KeyedSerial } from "./serial.js";
import { type ProfileSettings, parseSettings, SettingsError } from "./settings.js";
import type { MaintainContext, NodeEnrollment, ProviderLogger, ProvisionOptions } from "./types.js";
import { isFailure } from "./vercel-errors.js";

export const PROVIDER_ID = "vercel-sandbox";

export interface EnrollmentContext {
  leaseId: string;
  /** The SDK handle, for custom enrollers; the built-in one uses only `box`. */
  sandbox: SandboxHandle;
  /** The sandbox through the client seam: write files, run a command (retries, classification, redaction). */
  box: SandboxBox;
  enrollment: NodeEnrollment;
  signal?: AbortSignal;
}
/** Starts the OpenClaw node on the sandbox and resolves with its device id. */
export type NodeEnroller = (context: EnrollmentContext) => Promise<string>;

export type ProvisionStep = "allocated" | "adopted" | "enrollment-started" | "enrolled" | "released";

export interface VercelSandboxProviderOptions extends VercelClientOptions {
  logger?: ProviderLogger;
  /** Gateway scope mixed into lease ids and tags; a profile's `scope` setting wins. */
  scope?: string;
  /** Where the lease ledger lives; in memory when absent. */
  stateDir?: string;
  /** Replaces the built-in node bootstrap (tests, custom images). */
  enroll?: NodeEnroller;
  /** Tunes the built-in node bootstrap, e.g. a shorter wait for the device. */
  enrollment?: Omit<NodeEnrollerOptions, "logger">;
  retainedSnapshots?: RetainedSnapshots;
  /** Keepalive tick interval; by default a third of the session timeout, between 5 s and 5 minutes. */
  keepaliveIntervalMs?: number;
  /** Observes provision progress (tests, diagnostics). */
  onStep?: (step: ProvisionStep, leaseId: string) => void;
  /** How long release keeps looking up a deleted sandbox until the API says it is gone; about 10 s by default. */
  absenceProof?: AbsenceProof;
  /** How long a create that conflicted waits for the sandbox of its name to appear; about 12 s by default. */
  adoptLookups?: AdoptLookups;
}

export interface AdoptLookups {
  attempts: number;
  firstDelayMs: number;
}

export type VercelSandboxProvider = WorkerProvider & {
  renew(leaseId: string): Promise<void>;
  /** Stops every keepalive; the plugin service calls it on gateway stop. */
  dispose(): Promise<void>;
  /** Leases whose keepalive runs in this process (diagnostics). */
  keepaliveLeases(): string[];
};

const CREATE_BUDGET_MS = 3 * 60_000;
/** The bootstrap command (download 5 + install 10 + 2 minutes), the wait for the device (10) and evidence (1). */
const ENROLL_BUDGET_MS = 30 * 60_000;
const RELEASE_BUDGET_MS = 3 * 60_000;
const MAINTAIN_RELEASES_PER_PASS = 16;
const DEFAULT_ADOPT_LOOKUPS: AdoptLookups = { attempts: 8, firstDelayMs: 250 };

function settingsOf(profile: unknown): ProfileSettings {
  try {
    return parseSettings(profile);
  } catch (error) {
    if (error instanceof SettingsError) throw new WorkerProviderError(error.message);
    throw error;
  }
}

/** Errors leave the provider redacted, and without `cause` chains that could carry secrets. */
function sanitized(error: unknown): Error {
  if (error instanceof WorkerProviderError) return new WorkerProviderError(messageOf(error));
  if (WorkerProviderError.isCleanupIndeterminate(error)) return error;
  const out = new Error(messageOf(error));
  out.name = error instanceof Error ? error.name : "Error";
  return out;
}

export function createVercelSandboxProvider(options: VercelSandboxProviderOptions = {}): VercelSandboxProvider {
  const client = new VercelClient(options);
  const logger: ProviderLogger = options.logger ?? { warn: (message) => console.warn(message) };
  const ledger = LeaseLedger.inDirectory(options.stateDir, { logger });
  const absenceProof = options.absenceProof ?? DEFAULT_ABSENCE_PROOF;
  const adoptLookups = options.adoptLookups ?? DEFAULT_ADOPT_LOOKUPS;
  const keepalive = new Keepalive(logger, options.keepaliveIntervalMs);
  const serial = new KeyedSerial();
  const inflight = new Map<string, Promise<WorkerLease>>();
  const knownSettings = new Map<string, ProfileSettings>();
  /** Leases this process enrolled: their egress is at its enrolled stage (see `enrolledSandbox`). */
  const enrolledHere = new Set<string>();
  const bootstrapEnroller = new BootstrapEnroller({ logger, ...options.enrollment });
  const enroll: NodeEnroller = options.enroll ?? ((context) => bootstrapEnroller.enroll(context));
  const retained: RetainedSnapshots = options.retainedSnapshots ?? (async () => new Set());
  const step = (name: ProvisionStep, leaseId: string) => {
    options.onStep?.(name, leaseId);
    logger.info?.(`vercel-sandbox ${leaseId}: ${name}`);
  };

  function allocationFor(settings: ProfileSettings, operationId: string): Allocation {
    try {
      return allocate(settings.scope ?? options.scope, operationId);
    } catch (error) {
      if (error instanceof AllocationError) throw new WorkerProviderError(`vercel-sandbox: ${error.message}`);
      throw error;
    }
  }

  /** A profile's Vercel project; a backend this instance was not given is a permanent profile error. */
  async function projectFor(settings: ProfileSettings): Promise<VercelProject> {
    try {
      return await client.project(settings);
    } catch (error) {
      if (error instanceof BackendUnavailableError) throw new WorkerProviderError(`vercel-sandbox: ${error.message}`);
      throw error;
    }
  }

  function armKeepalive(leaseId: string, sandboxName: string, settings: ProfileSettings): void {
    knownSettings.set(leaseId, settings);
    keepalive.arm({ leaseId, timeoutMs: settings.timeoutMs, tick: () => extendIfRunning(sandboxName, settings) });
  }

  /**
   * Extends a running session (see `extensionMs`). Ends the keepalive once the sandbox is not running, or
   * with a reason when Vercel refuses the extension for good (a rotated token, a plan's timeout limit).
   */
  async function extendIfRunning(sandboxName: string, settings: ProfileSettings): Promise<TickOutcome> {
    const project = await projectFor(settings);
    const sandbox = await project.find(sandboxName);
    if (sandbox?.status !== "running") return { keep: false };
    const interval = keepalive.intervalFor(settings.timeoutMs);
    const ms = extensionMs(sandbox.expiresAt, Date.now(), settings.timeoutMs, interval);
    if (ms > 0) {
      try {
        await project.extendTimeout(sandbox, ms);
      } catch (error) {
        if (isFailure(error, "transient")) throw error;
        return { keep: false, reason: messageOf(error) };
      }
    }
    return { keep: true };
  }

  /**
   * Creates the lease's sandbox or adopts the one of its name. `claim.mayExist` records whether a sandbox of
   * ours may now exist, so a failure from here on knows whether it has something to release.
   */
  async function createOrAdopt(
    project: VercelProject,
    allocation: Allocation,
    request: ReturnType<typeof createRequest>,
    claim: { mayExist: boolean },
    signal?: AbortSignal,
  ): Promise<SandboxHandle> {
    try {
      const sandbox = await project.create(request, signal);
      claim.mayExist = true;
      step("allocated", allocation.leaseId);
      return sandbox;
    } catch (error) {
      // A replay, a concurrent provision, a create whose response was lost or one cut short by an abort:
      // the sandbox may exist now, so adopt it by name.
      const maybeCreated = isFailure(error, "conflict", "transient", "aborted") || signal?.aborted === true;
      if (!maybeCreated) throw error;
      claim.mayExist = true;
      const existing = await findSoon(project, allocation.sandboxName, signal);
      if (!existing) throw error;
      if (existing.tags?.[TAG_SCOPE] !== allocation.scope) {
        // Someone else's sandbox: never release it.
        claim.mayExist = false;
        throw new WorkerProviderError(
          `vercel-sandbox: sandbox ${allocation.sandboxName} exists but is not owned by scope ${allocation.scope}`,
        );
      }
      const sandbox = existing.status === "running" ? existing : await project.resume(allocation.sandboxName, signal);
      step("adopted", allocation.leaseId);
      return sandbox;
    }
  }

  /** A name that just conflicted may belong to a create still in flight elsewhere: give it a moment to appear. */
  async function findSoon(project: VercelProject, name: string, signal?: AbortSignal) {
    for (let attempt = 0; ; attempt += 1) {
      const found = await project.find(name, signal);
      if (found || attempt === adoptLookups.attempts) return found;
      await sleep(adoptLookups.firstDelayMs * 2 ** Math.min(attempt, 3), undefined, { signal });
    }
  }

  async function enrollOn(
    project: VercelProject,
    sandbox: SandboxHandle,
    settings: ProfileSettings,
    leaseId: string,
    options: ProvisionOptions,
    egressEnrolled: boolean,
    onEnrollment: (enrollment: NodeEnrollment) => void,
  ): Promise<string> {
    if (!options.beginNodeEnrollment) {
      throw new WorkerProviderError("vercel-sandbox: the gateway did not offer node enrollment for this worker");
    }
    const enrollment = await options.beginNodeEnrollment();
    onEnrollment(enrollment);
    registerSecret(enrollment.nodeBootstrap.token, leaseId);
    if (enrollment.mode === "connect") registerSecret(enrollment.setupCode, leaseId);
    step("enrollment-started", leaseId);
    // Egress opens for the bootstrap (gateway and package registry) and narrows to the gateway once enrolled.
    // A node this process enrolled is adopted, or resumed on the runtime it verified, through the gateway
    // alone: its egress stays at the enrolled stage.
    const gatewayHost = gatewayHostOf(enrollment.nodeBootstrap.url);
    const gateway = gatewayHost ? [gatewayHost] : [];
    const restricted = settings.networkPolicy !== "allow-all" && !egressEnrolled;
    if (restricted) {
      await project.updateNetworkPolicy(sandbox, egressPolicy(settings, gateway, "bootstrap"), options.signal);
    }
    const box = project.box(sandbox);
    const deviceId = await enroll({ leaseId, sandbox, box, enrollment, signal: options.signal });
    if (restricted) {
      await project.updateNetworkPolicy(sandbox, egressPolicy(settings, gateway, "enrolled"), options.signal);
    }
    return deviceId;
  }

  /**
   * On a replay of a lease this process enrolled, the sandbox it enrolled, if it still runs and is ours. Only
   * such replays look up before creating, so a cold provision never pays for the lookup; anything else
   * (stopped, gone, a failed lookup) returns undefined and the replay takes the create-or-adopt path.
   */
  async function enrolledSandbox(
    project: VercelProject,
    allocation: Allocation,
    signal?: AbortSignal,
  ): Promise<SandboxHandle | undefined> {
    if (!enrolledHere.delete(allocation.leaseId)) return undefined;
    const sandbox = await project.find(allocation.sandboxName, signal);
    if (sandbox?.status !== "running" || sandbox.tags?.[TAG_SCOPE] !== allocation.scope) return undefined;
    step("adopted", allocation.leaseId);
    return sandbox;
  }

  async function provisionLocked(
    settings: ProfileSettings,
    rawSettings: unknown,
    allocation: Allocation,
    vcpus: number,
    provisionOptions: ProvisionOptions,
  ): Promise<WorkerLease> {
    const { leaseId, sandboxName } = allocation;
    const { signal } = provisionOptions;
    if (await ledger.tombstone(leaseId)) {
      throw new WorkerProviderError(`vercel-sandbox: lease ${leaseId} was already destroyed; it is not re-created`);
    }
    const project = await projectFor(settings);
    signal?.throwIfAborted();
    const request = createRequest(allocation, settings, rawSettings, vcpus);
    const claim = { mayExist: false };
    let enrollment: NodeEnrollment | undefined;
    try {
      const enrolled = await enrolledSandbox(project, allocation, signal);
      if (enrolled) claim.mayExist = true;
      const sandbox = enrolled ?? (await createOrAdopt(project, allocation, request, claim, signal));
      signal?.throwIfAborted();
      const deviceId = await enrollOn(project, sandbox, settings, leaseId, provisionOptions, !!enrolled, (e) => {
        enrollment = e;
      });
      step("enrolled", leaseId);
      enrolledHere.add(leaseId);
      armKeepalive(leaseId, sandboxName, settings);
      return { leaseId, sharedHost: false, node: { deviceId } };
    } catch (error) {
      if (!claim.mayExist) throw error;
      // The gateway is shutting down (not an operator Stop): keep the sandbox so the restarted gateway's
      // replay of this operation adopts it instead of paying for a new one.
      if (enrollment?.signal?.aborted && !signal?.aborted) throw error;
      try {
        // Without the provision's signal: an aborted provision must still release what it created.
        await releaseSandbox(project, sandboxName, retained, undefined, absenceProof);
        step("released", leaseId);
      } catch (cleanupError) {
        throw WorkerProviderError.cleanupIndeterminate(leaseId, sanitized(error), sanitized(cleanupError));
      }
      throw error;
    }
  }

  const provider: VercelSandboxProvider = {
    id: PROVIDER_ID,
    supportedExecutionModes: ["worker-turn", "remote-exec"],
    requiresNodeEnrollment: true,
    provisionBeforeInstallation: true,

    async listMachineOptions(profile) {
      return machineOptions(settingsOf(profile));
    },

    async resolveAllocation(profile, operationId) {
      const { leaseId } = allocationFor(settingsOf(profile), operationId);
      return { leaseId, sharedHost: false };
    },

    async provision(profile, operationId, provisionOptions = {}) {
      const settings = settingsOf(profile);
      const mode = provisionOptions.executionMode;
      if (mode !== undefined && mode !== "worker-turn" && mode !== "remote-exec") {
        throw new WorkerProviderError(`vercel-sandbox: execution mode ${String(mode)} is not supported`);
      }
      let vcpus = settings.vcpus;
      if (provisionOptions.machineClass !== undefined) {
        const chosen = vcpusOfMachineClass(provisionOptions.machineClass);
        if (chosen === undefined) {
          throw new WorkerProviderError(
            `vercel-sandbox: machine class ${JSON.stringify(provisionOptions.machineClass.slice(0, 128))} is not one of vcpu-1, vcpu-2, vcpu-4, vcpu-8`,
          );
        }
        vcpus = chosen;
      }
      const allocation = allocationFor(settings, operationId);
      provisionOptions.signal?.throwIfAborted();
      const running = inflight.get(allocation.leaseId);
      if (running) return running;
      const attempt = serial
        .run(allocation.leaseId, () => provisionLocked(settings, profile, allocation, vcpus, provisionOptions))
        .catch((error: unknown) => {
          const out = sanitized(error);
          // The enrollment this attempt registered is dead; a replay registers its own.
          forgetSecrets(allocation.leaseId);
          throw out;
        })
        .finally(() => inflight.delete(allocation.leaseId));
      inflight.set(allocation.leaseId, attempt);
      return attempt;
    },

    resolveProvisionTimeoutMs() {
      return CREATE_BUDGET_MS + ENROLL_BUDGET_MS + RELEASE_BUDGET_MS;
    },

    async inspect({ leaseId, profile }): Promise<WorkerLeaseStatus> {
      const settings = settingsOf(profile);
      try {
        const sandboxName = sandboxNameOf(leaseId);
        const sandbox = await (await projectFor(settings)).find(sandboxName);
        if (!sandbox) {
          await keepalive.disarm(leaseId);
          // A missing name is only proof of teardown when we destroyed it ourselves.
          return (await ledger.tombstone(leaseId)) ? { status: "destroyed" } : { status: "unknown" };
        }
        switch (sandbox.status) {
          case "running":
          case "pending":
          case "snapshotting":
            armKeepalive(leaseId, sandboxName, settings);
            return { status: "active", sharedHost: false };
          case "stopping":
          case "stopped":
            await keepalive.disarm(leaseId);
            return { status: "dormant" };
          default:
            await keepalive.disarm(leaseId);
            return { status: "unknown" };
        }
      } catch (error) {
        if (isFailure(error, "gone")) return { status: "unknown" };
        throw sanitized(error);
      }
    },

    async destroy({ leaseId, profile }) {
      const settings = settingsOf(profile);
      try {
        const sandboxName = sandboxNameOf(leaseId);
        await serial.run(leaseId, async () => {
          // Under the lease's lock, so a provision still in flight has settled and cannot re-arm it after.
          await keepalive.disarm(leaseId);
          knownSettings.delete(leaseId);
          enrolledHere.delete(leaseId);
          await ledger.bury(leaseId, sandboxName);
          await releaseSandbox(await projectFor(settings), sandboxName, retained, undefined, absenceProof);
          await ledger.markAbsent(leaseId);
        });
      } catch (error) {
        throw sanitized(error);
      }
      forgetSecrets(leaseId);
    },

    resolveDestroyTimeoutMs() {
      return RELEASE_BUDGET_MS + 3 * 60_000;
    },

    async renew(leaseId) {
      const settings = knownSettings.get(leaseId);
      if (!settings) throw new Error(`vercel-sandbox: lease ${leaseId} is not active in this gateway process`);
      let outcome: TickOutcome;
      try {
        outcome = await serial.run(leaseId, () => extendIfRunning(sandboxNameOf(leaseId), settings));
      } catch (error) {
        throw sanitized(error);
      }
      if (!outcome.keep && outcome.reason) throw new Error(`vercel-sandbox: lease ${leaseId}: ${outcome.reason}`);
    },

    async maintain(context: MaintainContext) {
      try {
        await maintainPass(context);
      } catch (error) {
        throw sanitized(error);
      }
    },

    async dispose() {
      await keepalive.stopAll();
    },

    keepaliveLeases() {
      return keepalive.armed();
    },
  };

  /** Releases sandboxes of leases core already destroyed (a late replay re-created them); nothing else. */
  async function maintainPass(context: MaintainContext): Promise<void> {
    let budget = MAINTAIN_RELEASES_PER_PASS;
    for (const profile of context.profiles) {
      if (context.signal.aborted || budget === 0) return;
      const settings = settingsOf(profile);
      const scope = effectiveScope(settings.scope ?? options.scope);
      const project = await projectFor(settings);
      for (const summary of await project.list({ [TAG_SCOPE]: scope }, context.signal)) {
        const leaseId = leaseIdOf(summary.name);
        if (!leaseId || !(await ledger.tombstone(leaseId)) || budget === 0 || context.signal.aborted) continue;
        // Only a lease core already destroyed is proof that this sandbox is an orphan.
        context.assertCurrent();
        budget -= 1;
        await serial.run(leaseId, () => releaseSandbox(project, summary.name, retained, context.signal, absenceProof));
        context.assertCurrent();
        await ledger.markAbsent(leaseId);
        logger.warn(`vercel-sandbox maintenance released orphaned sandbox ${summary.name} of lease ${leaseId}`);
      }
    }
  }
  return provider;
}
