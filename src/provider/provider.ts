// The `vercel-sandbox` WorkerProvider, assembled from single-purpose parts: settings (pure), allocation
// (pure), the Vercel client seam, the provision steps (src/provider/steps: create or adopt → prepare → enroll,
// with one cleanup rule), release-with-proof, the lease ledger, the warm-image store and the keepalive. Every
// failure is mapped onto the contract: WorkerProviderError only before allocation or after proven release,
// cleanupIndeterminate when release could not be proven, plain (retryable) errors otherwise.
import type { WorkerLease, WorkerLeaseStatus, WorkerProvider } from "openclaw/plugin-sdk/plugin-entry";
import { WorkerProviderError } from "openclaw/plugin-sdk/plugin-entry";
import type { MaintainContext, ProviderLogger, ProvisionOptions } from "../infra/index.js";
import { forgetSecrets, messageOf } from "../infra/index.js";
import { DeclaredPreparationError, ImageRefusedError } from "../preparation/prepare.js";
import { ImageStore } from "../preparation/store.js";
import { type ProfileSettings, parseSettings, SettingsError } from "../settings/index.js";
import {
  BackendUnavailableError,
  isFailure,
  VercelClient,
  type VercelClientOptions,
  type VercelProject,
} from "../vercel/index.js";
import { type Allocation, AllocationError, allocate, sandboxNameOf } from "./allocation.js";
import { NodeEnroller as BootstrapEnroller, type NodeEnrollerOptions } from "./enrollment/index.js";
import { extensionMs, Keepalive, type TickOutcome } from "./keepalive.js";
import { LeaseLedger } from "./ledger.js";
import { maintenanceFailure, maintenancePass, type ProfileFailure } from "./maintenance.js";
import { machineOptions, vcpusOfMachineClass } from "./policy.js";
import { type AbsenceProof, DEFAULT_ABSENCE_PROOF, type RetainedSnapshots, releaseSandbox } from "./release.js";
import { KeyedSerial } from "./serial.js";
import { failProvision, sanitized } from "./steps/cleanup.js";
import { adoptEnrolled, createOrAdopt } from "./steps/create-or-adopt.js";
import { enrollNode, type NodeEnroller } from "./steps/enroll.js";
import { chooseStart, imageGone, imageOf, prepareStep, type StartChoice, type WarmImages } from "./steps/prepare.js";
import type { AdoptLookups, ProvisionRun, ProvisionStep, StepContext } from "./steps/run.js";
import { startWorker } from "./steps/worker-start.js";

export type { EnrollmentContext, NodeEnroller } from "./steps/enroll.js";
export type { AdoptLookups, ProvisionStep } from "./steps/run.js";

export const PROVIDER_ID = "vercel-sandbox";

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
  /** Told when a provision starts and settles (the plugin's idle clock counts it as activity). */
  activity?: { provisionStarted(leaseId: string): void; provisionEnded(leaseId: string): void };
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
/** Seed, recipe phases (30 minutes each at most; most recipes take a few), runtime, scrub, capture, restore. */
const PREPARE_BUDGET_MS = 60 * 60_000;
const DEFAULT_ADOPT_LOOKUPS: AdoptLookups = { attempts: 8, firstDelayMs: 250 };

/** Whether a profile keeps warm images; an invalid profile prepares nothing (provision reports what is wrong). */
function warmImagesOn(profile: unknown): boolean {
  try {
    return parseSettings(profile).warmImage;
  } catch {
    return false;
  }
}

function settingsOf(profile: unknown): ProfileSettings {
  try {
    return parseSettings(profile);
  } catch (error) {
    if (error instanceof SettingsError) throw new WorkerProviderError(error.message);
    throw error;
  }
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
  const bootstrapEnroller = new BootstrapEnroller({ logger, ...options.enrollment });
  const enroll: NodeEnroller = options.enroll ?? ((context) => bootstrapEnroller.enroll(context));
  const images = ImageStore.inDirectory(options.stateDir, { logger });
  // Release never deletes a snapshot a warm image (or a caller) retains.
  const retained: RetainedSnapshots = async (sandboxName) => {
    const kept = new Set(await images.retainedSnapshotIds());
    for (const id of (await options.retainedSnapshots?.(sandboxName)) ?? []) kept.add(id);
    return kept;
  };
  const warmImages: WarmImages = {
    store: images,
    installRuntime: (leaseId, box, runtime, signal) =>
      bootstrapEnroller.prepareRuntime({ leaseId, box, runtime, signal }),
  };
  const stepContext: StepContext = {
    logger,
    adoptLookups,
    absenceProof,
    retained,
    step(name: ProvisionStep, leaseId: string) {
      options.onStep?.(name, leaseId);
      logger.info?.(`vercel-sandbox ${leaseId}: ${name}`);
    },
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

  const maintenance = {
    ledger,
    images,
    serial,
    retained,
    absenceProof,
    logger,
    scope: options.scope,
    settingsOf,
    projectFor,
  };

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
    const run: ProvisionRun = {
      allocation,
      settings,
      rawSettings,
      vcpus,
      options: provisionOptions,
      project,
      mayExist: false,
    };
    let start: StartChoice | undefined;
    try {
      // allocate → create or adopt → prepare → enroll → keep alive
      const mark = await ledger.enrolled(leaseId);
      const enrolled = mark ? await adoptEnrolled(run, stepContext) : undefined;
      start = enrolled ? undefined : await chooseStart(run, warmImages);
      let sandbox =
        enrolled ??
        (await createOrAdopt(run, stepContext, imageOf(start)).catch(async (error: unknown) => {
          throw await imageGone(error, start, warmImages);
        }));
      signal?.throwIfAborted();
      const prepared = start ? await prepareStep(run, stepContext, sandbox, start, warmImages) : undefined;
      sandbox = prepared?.sandbox ?? sandbox;
      const node = await enrollNode(run, stepContext, sandbox, enroll, enrolled ? mark?.gateway : undefined);
      if (start) await warmImages.store.advanceChoice(leaseId, "enrolled");
      if (prepared) await startWorker(run, sandbox, prepared);
      await ledger.markEnrolled(leaseId, sandboxName, node.gateway);
      armKeepalive(leaseId, sandboxName, settings);
      return { leaseId, sharedHost: false, node: { deviceId: node.deviceId } };
    } catch (error) {
      // Whatever the failure left (a released sandbox, a kept one mid-enrollment), it is not known enrolled.
      await ledger.forgetEnrolled(leaseId);
      const out = await failProvision(run, stepContext, error);
      // A declared recipe's failure is permanent once nothing is left behind, and so is a refused image: the
      // lease's recorded start is that image, so a replay would meet it again (the next dispatch starts cold).
      if (out instanceof DeclaredPreparationError || out instanceof ImageRefusedError) {
        throw new WorkerProviderError(messageOf(out));
      }
      throw out;
    }
  }

  const provider: VercelSandboxProvider = {
    id: PROVIDER_ID,
    supportedExecutionModes: ["worker-turn", "remote-exec"],
    requiresNodeEnrollment: true,
    provisionBeforeInstallation: true,

    supportsProjectPreparation: warmImagesOn,

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
      options.activity?.provisionStarted(allocation.leaseId);
      const attempt = serial
        .run(allocation.leaseId, () => provisionLocked(settings, profile, allocation, vcpus, provisionOptions))
        .catch((error: unknown) => {
          const out = sanitized(error);
          // The enrollment this attempt registered is dead; a replay registers its own.
          forgetSecrets(allocation.leaseId);
          throw out;
        })
        .finally(() => {
          inflight.delete(allocation.leaseId);
          options.activity?.provisionEnded(allocation.leaseId);
        });
      inflight.set(allocation.leaseId, attempt);
      return attempt;
    },

    resolveProvisionTimeoutMs(profile) {
      const prepare = warmImagesOn(profile) ? PREPARE_BUDGET_MS : 0;
      return CREATE_BUDGET_MS + prepare + ENROLL_BUDGET_MS + RELEASE_BUDGET_MS;
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
          await ledger.bury(leaseId, sandboxName);
          await releaseSandbox(await projectFor(settings), sandboxName, retained, undefined, absenceProof);
          await ledger.markAbsent(leaseId);
          // The lease is gone: the image it started from is no longer pinned by it.
          await images.releaseChoice(leaseId);
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
      let failures: ProfileFailure[];
      try {
        failures = await maintenancePass(maintenance, context);
      } catch (error) {
        throw sanitized(error);
      }
      if (failures.length > 0) throw maintenanceFailure(failures);
    },

    async dispose() {
      await keepalive.stopAll();
    },

    keepaliveLeases() {
      return keepalive.armed();
    },
  };

  return provider;
}
