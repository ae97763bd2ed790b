// The cap around a worker provider: provision is admitted by the WorkerCap before the provider allocates
// anything (and its slot released if it fails), destroy frees the slot once release is proven. Core's calls
// are unchanged otherwise, so the provider itself knows nothing of the cap.
import { type WorkerProvider, WorkerProviderError } from "openclaw/plugin-sdk/plugin-entry";
import type { WorkerCap } from "./gate.js";

export interface CapOptions {
  cap: WorkerCap;
  /** The profile's `maxWorkers` (undefined: unbounded); throws the provider's own error for a bad profile. */
  maxWorkersOf(profile: unknown): number | undefined;
}

export function withWorkerCap<P extends WorkerProvider>(provider: P, options: CapOptions): P {
  const { cap, maxWorkersOf } = options;
  return {
    ...provider,
    async provision(profile, operationId, provisionOptions) {
      const maxWorkers = maxWorkersOf(profile);
      const { leaseId } = await provider.resolveAllocation(profile, operationId);
      provisionOptions?.signal?.throwIfAborted();
      await cap.admit(leaseId, maxWorkers);
      try {
        const lease = await provider.provision(profile, operationId, provisionOptions);
        cap.settle(leaseId, true);
        return lease;
      } catch (error) {
        // Release not proven: the sandbox may still exist, so it keeps its slot until core's destroy proves it gone.
        cap.settle(leaseId, WorkerProviderError.isCleanupIndeterminate(error));
        throw error;
      }
    },
    async destroy(request) {
      await provider.destroy(request);
      cap.forget(request.leaseId);
    },
  };
}
