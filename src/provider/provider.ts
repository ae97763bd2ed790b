// The `vercel-sandbox` WorkerProvider, assembled from single-purpose parts the way OpenClaw's Crabbox provider
// is: the shared parts (parts.ts: the Vercel client seam, the lease ledger, the warm-image store, the
// keepalive timers, the per-lease lock) built once, then one member per file in src/provider/members, each
// reading on its own. Every failure is mapped onto the contract: WorkerProviderError only before allocation or
// after proven release, cleanupIndeterminate when release could not be proven, plain (retryable) errors
// otherwise. A new member goes in its own file under members/ and one line here.
import { resolveDestroyTimeoutMs, resolveProvisionTimeoutMs } from "./members/budgets.js";
import { createResolveAllocation, listMachineOptions, supportsProjectPreparation } from "./members/describe.js";
import { createDestroy } from "./members/destroy.js";
import { createInspect } from "./members/inspect.js";
import { createMaintain } from "./members/maintain.js";
import { resolvePreparationTarget, resolvePreparedIdleTimeoutMs } from "./members/preparation-target.js";
import { createNotePreparedDemand } from "./members/prepared-demand.js";
import { enrolledScripts, withPreparedWorkspaces } from "./members/prepared-provision.js";
import { createProvision } from "./members/provision.js";
import { createRenewal } from "./members/renewal.js";
import { PROVIDER_ID, type VercelSandboxProvider, type VercelSandboxProviderOptions } from "./options.js";
import { createParts } from "./parts.js";

export {
  PROVIDER_ID,
  type PreparedPoolMembers,
  type VercelSandboxProvider,
  type VercelSandboxProviderOptions,
} from "./options.js";
export type { EnrollmentContext, NodeEnroller } from "./steps/enroll.js";
export type { AdoptLookups, ProvisionStep } from "./steps/run.js";

export function createVercelSandboxProvider(options: VercelSandboxProviderOptions = {}): VercelSandboxProvider {
  const parts = createParts(options);
  const renewal = createRenewal(parts);
  return {
    id: PROVIDER_ID,
    supportedExecutionModes: ["worker-turn", "remote-exec"],
    requiresNodeEnrollment: true,
    provisionBeforeInstallation: true,
    supportsProjectPreparation,
    listMachineOptions,
    resolveAllocation: createResolveAllocation(parts),
    resolvePreparationTarget,
    resolvePreparedIdleTimeoutMs,
    notePreparedDemand: createNotePreparedDemand(parts),
    provision: withPreparedWorkspaces(createProvision(parts, renewal), enrolledScripts(parts)),
    resolveProvisionTimeoutMs,
    inspect: createInspect(parts, renewal),
    destroy: createDestroy(parts, renewal),
    resolveDestroyTimeoutMs,
    renew: renewal.renew,
    maintain: createMaintain(parts),
    dispose: renewal.dispose,
    keepaliveLeases: renewal.leases,
  };
}
