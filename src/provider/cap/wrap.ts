// The cap around a worker provider: a placement of a profile with `maxWorkers` is admitted by the WorkerCap
// before the provider allocates anything (its slot released if it fails); one without is counted but never
// held back (it goes to the provider at once, as before). Destroy frees the slot once release is proven. A
// capped placement is activity from its first moment (the idle clock must not let the gateway sleep while it
// waits for a reclaim), so admission is reported as a provision of its own.
import { type WorkerProvider, WorkerProviderError } from "openclaw/plugin-sdk/plugin-entry";
import type { LeaseCap, WorkerCap } from "./gate.js";

export interface CapOptions {
  cap: WorkerCap;
  /**
   * The profile's cap (`maxWorkers`) and how long a turn waits at it (`capWait`); undefined: unbounded, or a profile
   * the provider itself refuses.
   */
  capOf(profile: unknown): LeaseCap | undefined;
  activity?: { provisionStarted(key: string): void; provisionEnded(key: string): void };
}

export function withWorkerCap<P extends WorkerProvider>(provider: P, options: CapOptions): P {
  const { cap, capOf, activity } = options;

  async function settled<T>(leaseId: Promise<string>, attempt: Promise<T>): Promise<T> {
    try {
      const lease = await attempt;
      cap.settle(await leaseId, true);
      return lease;
    } catch (error) {
      // Release not proven: the sandbox may still exist, so it keeps its slot until core's destroy proves it gone.
      const id = await leaseId.catch(() => undefined);
      if (id) cap.settle(id, WorkerProviderError.isCleanupIndeterminate(error));
      throw error;
    }
  }

  async function admitted(profile: unknown, operationId: string, leaseCap: LeaseCap): Promise<string> {
    const key = `cap:${operationId}`;
    activity?.provisionStarted(key);
    try {
      const { leaseId } = await provider.resolveAllocation(profile as never, operationId);
      cap.remember(leaseId, leaseCap);
      await cap.admit(leaseId, leaseCap.maxWorkers);
      return leaseId;
    } finally {
      activity?.provisionEnded(key);
    }
  }

  return {
    ...provider,
    provision(profile, operationId, provisionOptions) {
      const leaseCap = capOf(profile);
      if (leaseCap === undefined) {
        const leaseId = provider.resolveAllocation(profile, operationId).then(({ leaseId: id }) => {
          cap.note(id);
          return id;
        });
        leaseId.catch(() => undefined);
        return settled(leaseId, provider.provision(profile, operationId, provisionOptions));
      }
      const leaseId = admitted(profile, operationId, leaseCap);
      return settled(
        leaseId,
        leaseId.then(() => {
          provisionOptions?.signal?.throwIfAborted();
          return provider.provision(profile, operationId, provisionOptions);
        }),
      );
    },
    async destroy(request) {
      await provider.destroy(request);
      cap.forget(request.leaseId);
    },
  };
}
