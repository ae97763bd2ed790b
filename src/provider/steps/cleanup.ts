// The one cleanup rule of provision: a failure after a sandbox of ours may exist releases it, with proof,
// before the failure leaves the provider; a release that cannot be proven becomes cleanupIndeterminate. The
// exception is a gateway shutdown (not an operator's Stop) during enrollment: the sandbox is kept so the
// restarted gateway's replay adopts it instead of paying for a new one.
import { WorkerProviderError } from "openclaw/plugin-sdk/plugin-entry";
import { messageOf } from "../../infra/index.js";
import { releaseSandbox } from "../release.js";
import type { ProvisionRun, StepContext } from "./run.js";

/** Errors leave the provider redacted, and without `cause` chains that could carry secrets. */
export function sanitized(error: unknown): Error {
  if (error instanceof WorkerProviderError) return new WorkerProviderError(messageOf(error));
  if (WorkerProviderError.isCleanupIndeterminate(error)) return error;
  const out = new Error(messageOf(error));
  out.name = error instanceof Error ? error.name : "Error";
  return out;
}

/** Returns the error provision should throw for `error`, after releasing what the attempt created. */
export async function failProvision(run: ProvisionRun, context: StepContext, error: unknown): Promise<unknown> {
  if (!run.mayExist) return error;
  if (run.enrollment?.signal?.aborted && !run.options.signal?.aborted) return error;
  const { leaseId, sandboxName } = run.allocation;
  try {
    // Without the provision's signal: an aborted provision must still release what it created.
    await releaseSandbox(run.project, sandboxName, context.retained, undefined, context.absenceProof);
    context.step("released", leaseId);
  } catch (cleanupError) {
    return WorkerProviderError.cleanupIndeterminate(leaseId, sanitized(error), sanitized(cleanupError));
  }
  return error;
}
