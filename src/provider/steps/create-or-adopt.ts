// Step 2: the lease's sandbox, created (cold or from its recorded image) or adopted by name. Names are unique
// on Vercel, so a replay, a concurrent provision or a create whose answer was lost all converge on one
// sandbox. Cleanup rule: `run.mayExist` turns true as soon as a sandbox of ours may exist.
import { setTimeout as sleep } from "node:timers/promises";
import { WorkerProviderError } from "openclaw/plugin-sdk/plugin-entry";
import type { SandboxHandle, VercelProject } from "../../vercel/index.js";
import { isFailure } from "../../vercel/index.js";
import { TAG_SCOPE } from "../allocation.js";
import { assertMayAllocate } from "../authority.js";
import { createRequest } from "../policy.js";
import type { ProvisionRun, StepContext } from "./run.js";

export async function createOrAdopt(run: ProvisionRun, context: StepContext, fromImage?: string) {
  const { allocation, project } = run;
  const signal = run.options.signal;
  const { runtime, ...shape } = createRequest(allocation, run.settings, run.rawSettings, run.vcpus);
  // A snapshot carries its runtime: Vercel takes a source snapshot or a runtime, never both.
  const request = fromImage
    ? { ...shape, source: { type: "snapshot" as const, snapshotId: fromImage } }
    : { ...shape, runtime };
  assertMayAllocate(run.options);
  try {
    const sandbox = await project.create(request, signal);
    run.mayExist = true;
    run.created = true;
    context.step("allocated", allocation.leaseId);
    return sandbox;
  } catch (error) {
    // A replay, a concurrent provision, a create whose response was lost or one cut short by an abort: the
    // sandbox may exist now, so adopt it by name.
    const maybeCreated = isFailure(error, "conflict", "transient", "aborted") || signal?.aborted === true;
    if (!maybeCreated) throw error;
    run.mayExist = true;
    const existing = await findSoon(project, allocation.sandboxName, context, signal);
    if (!existing) throw error;
    if (existing.tags?.[TAG_SCOPE] !== allocation.scope) {
      // Someone else's sandbox: never release it.
      run.mayExist = false;
      throw new WorkerProviderError(
        `vercel-sandbox: sandbox ${allocation.sandboxName} exists but is not owned by scope ${allocation.scope}`,
      );
    }
    assertMayAllocate(run.options);
    const sandbox = existing.status === "running" ? existing : await project.resume(allocation.sandboxName, signal);
    context.step("adopted", allocation.leaseId);
    return sandbox;
  }
}

/** A name that just conflicted may belong to a create still in flight elsewhere: give it a moment to appear. */
async function findSoon(project: VercelProject, name: string, context: StepContext, signal?: AbortSignal) {
  for (let attempt = 0; ; attempt += 1) {
    const found = await project.find(name, signal);
    if (found || attempt === context.adoptLookups.attempts) return found;
    await sleep(context.adoptLookups.firstDelayMs * 2 ** Math.min(attempt, 3), undefined, { signal });
  }
}

/**
 * On a replay of a lease a provider on this state dir enrolled (this process, or the gateway before its restart:
 * the ledger's mark), the sandbox it enrolled, if it still runs and is ours. Only such replays look up before
 * creating, so a cold provision never pays for the lookup; anything else (stopped, gone, a failed lookup)
 * returns undefined and the replay takes the create-or-adopt path.
 */
export async function adoptEnrolled(run: ProvisionRun, context: StepContext): Promise<SandboxHandle | undefined> {
  const { allocation } = run;
  const sandbox = await run.project.find(allocation.sandboxName, run.options.signal);
  if (sandbox?.status !== "running" || sandbox.tags?.[TAG_SCOPE] !== allocation.scope) return undefined;
  assertMayAllocate(run.options);
  run.mayExist = true;
  context.step("adopted", allocation.leaseId);
  return sandbox;
}
