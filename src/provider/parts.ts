// The parts every member of the provider stands on, built once per provider from its options: the Vercel
// client, the lease ledger, the warm-image store, the keepalive timers, the per-lease command slot, and the
// step context the provision steps share. Members (src/provider/members) receive these and nothing else, so
// each reads on its own.
import { WorkerProviderError } from "openclaw/plugin-sdk/plugin-entry";
import type { ProviderLogger } from "../infra/index.js";
import { ImageStore } from "../preparation/index.js";
import type { ProfileSettings } from "../settings/index.js";
import { BackendUnavailableError, VercelClient, type VercelProject } from "../vercel/index.js";
import { type Allocation, AllocationError, allocate } from "./allocation.js";
import { BootstrapEnroller } from "./enrollment/index.js";
import { Keepalive } from "./keepalive.js";
import { LeaseLedger } from "./ledger.js";
import type { VercelSandboxProviderOptions } from "./options.js";
import { type AbsenceProof, DEFAULT_ABSENCE_PROOF, type RetainedSnapshots } from "./release.js";
import { KeyedSerial } from "./serial.js";
import type { NodeEnroller } from "./steps/enroll.js";
import type { AdoptLookups, ProvisionStep, StepContext } from "./steps/run.js";
import type { WarmImages } from "./steps/warm-images.js";

const DEFAULT_ADOPT_LOOKUPS: AdoptLookups = { attempts: 8, firstDelayMs: 250 };

export interface ProviderParts {
  options: VercelSandboxProviderOptions;
  logger: ProviderLogger;
  client: VercelClient;
  ledger: LeaseLedger;
  images: ImageStore;
  keepalive: Keepalive;
  /** One command slot per lease: provision, destroy, renew and maintenance of one lease run one at a time. */
  serial: KeyedSerial;
  absenceProof: AbsenceProof;
  /** Release never deletes a snapshot a warm image (or a caller) retains. */
  retained: RetainedSnapshots;
  warmImages: WarmImages;
  enroll: NodeEnroller;
  steps: StepContext;
  /** A profile's Vercel project; a backend this instance was not given is a permanent profile error. */
  projectFor(settings: ProfileSettings): Promise<VercelProject>;
  /** A lease's id and sandbox name; an unusable operation id is a permanent error. */
  allocationFor(settings: ProfileSettings, operationId: string): Allocation;
}

export function createParts(options: VercelSandboxProviderOptions): ProviderParts {
  const client = new VercelClient(options);
  const logger: ProviderLogger = options.logger ?? { warn: (message) => console.warn(message) };
  const ledger = LeaseLedger.inDirectory(options.stateDir, { logger });
  const bootstrapEnroller = new BootstrapEnroller({ logger, ...options.enrollment });
  const images = ImageStore.inDirectory(options.stateDir, { logger });
  const absenceProof = options.absenceProof ?? DEFAULT_ABSENCE_PROOF;
  const retained: RetainedSnapshots = async (sandboxName) => {
    const kept = new Set(await images.retainedSnapshotIds());
    for (const id of (await options.retainedSnapshots?.(sandboxName)) ?? []) kept.add(id);
    return kept;
  };
  return {
    options,
    logger,
    client,
    ledger,
    images,
    keepalive: new Keepalive(logger, options.keepaliveIntervalMs),
    serial: new KeyedSerial(),
    absenceProof,
    retained,
    warmImages: {
      store: images,
      installRuntime: (leaseId, box, runtime, signal) =>
        bootstrapEnroller.prepareRuntime({ leaseId, box, runtime, signal }),
    },
    enroll: options.enroll ?? ((context) => bootstrapEnroller.enroll(context)),
    steps: {
      logger,
      adoptLookups: options.adoptLookups ?? DEFAULT_ADOPT_LOOKUPS,
      absenceProof,
      retained,
      step(name: ProvisionStep, leaseId: string) {
        options.onStep?.(name, leaseId);
        logger.info?.(`vercel-sandbox ${leaseId}: ${name}`);
      },
    },
    async projectFor(settings) {
      try {
        return await client.project(settings);
      } catch (error) {
        if (error instanceof BackendUnavailableError) throw new WorkerProviderError(`vercel-sandbox: ${error.message}`);
        throw error;
      }
    },
    allocationFor(settings, operationId) {
      try {
        return allocate(settings.scope ?? options.scope, operationId);
      } catch (error) {
        if (error instanceof AllocationError) throw new WorkerProviderError(`vercel-sandbox: ${error.message}`);
        throw error;
      }
    },
  };
}
