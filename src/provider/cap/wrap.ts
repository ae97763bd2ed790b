// The cap around a worker provider: a placement of a profile with `maxWorkers` is admitted by the WorkerCap
// before the provider allocates anything (its slot released if it fails); one without is counted but never
// held back (it goes to the provider at once, as before). Destroy frees the slot once release is proven. A
// capped placement is activity from its first moment (the idle clock must not let the gateway sleep while it
// waits for a reclaim), so admission is reported as a provision of its own.
import { type WorkerProvider, WorkerProviderError } from "openclaw/plugin-sdk/plugin-entry";
import type { WorkerCap } from "./gate.js";

/** How long a turn waits at a cap when the profile does not say (the settings' own default is the same). */
const DEFAULT_WAIT_MS = 5 * 60_000;

export interface CapOptions {
  cap: WorkerCap;
  /** The profile's `maxWorkers` (undefined: unbounded, or a profile the provider itself refuses). */
  maxWorkersOf(profile: unknown): number | undefined;
  /** How long a turn waits at the profile's cap (`capWait`); default DEFAULT_WAIT_MS. */
  capWaitOf?(profile: unknown): number | undefined;
  activity?: { provisionStarted(key: string): void; provisionEnded(key: string): void };
}

export function withWorkerCap<P extends WorkerProvider>(provider: P, options: CapOptions): P {
  const { cap, maxWorkersOf, capWaitOf, activity } = options;

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

  async function admitted(profile: unknown, operationId: string, maxWorkers: number): Promise<string> {
    const key = `cap:${operationId}`;
    activity?.provisionStarted(key);
    try {
      const { leaseId } = await provider.resolveAllocation(profile as never, operationId);
      cap.remember(leaseId, { maxWorkers, waitMs: capWaitOf?.(profile) ?? DEFAULT_WAIT_MS });
      await cap.admit(leaseId, maxWorkers);
      return leaseId;
    } finally {
      activity?.provisionEnded(key);
    }
  }

  return {
    ...provider,
    provision(profile, operationId, provisionOptions) {
      const maxWorkers = maxWorkersOf(profile);
      if (maxWorkers === undefined) {
        const leaseId = provider.resolveAllocation(profile, operationId).then(({ leaseId: id }) => {
          cap.note(id);
          return id;
        });
        leaseId.catch(() => undefined);
        return settled(leaseId, provider.provision(profile, operationId, provisionOptions));
      }
      const leaseId = admitted(profile, operationId, maxWorkers);
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
