// Releasing a sandbox with proof: delete it (with the snapshots it owns that no warm image retains), then
// look it up until the API says it does not exist. A delete is not instantly visible to every reader of the
// real API, so one "still there" is "not yet": the lookup is repeated with backoff, within a bound.
import { setTimeout as sleep } from "node:timers/promises";
import type { VercelProject } from "../vercel/index.js";

export type RetainedSnapshots = (sandboxName: string) => Promise<ReadonlySet<string>>;

/** How long release keeps looking for proof of absence after the delete was accepted. */
export interface AbsenceProof {
  budgetMs: number;
  firstDelayMs: number;
  maxDelayMs: number;
}

export const DEFAULT_ABSENCE_PROOF: AbsenceProof = { budgetMs: 10_000, firstDelayMs: 100, maxDelayMs: 2_000 };

export class ReleaseUnprovenError extends Error {
  override readonly name = "ReleaseUnprovenError";
}

export async function releaseSandbox(
  project: VercelProject,
  sandboxName: string,
  retained: RetainedSnapshots,
  signal?: AbortSignal,
  proof: AbsenceProof = DEFAULT_ABSENCE_PROOF,
): Promise<"released" | "absent"> {
  const sandbox = await project.find(sandboxName, signal);
  if (!sandbox) return "absent";
  const keep = await retained(sandboxName);
  if (keep.size > 0) {
    for (const id of await project.snapshotIdsOf(sandboxName, signal)) {
      if (!keep.has(id)) await project.deleteSnapshot(id, signal);
    }
  }
  await project.delete(sandbox, keep.size === 0, signal);
  await proveAbsent(project, sandboxName, proof, signal);
  return "released";
}

async function proveAbsent(project: VercelProject, name: string, proof: AbsenceProof, signal?: AbortSignal) {
  let waited = 0;
  for (let delay = proof.firstDelayMs; ; delay = Math.min(delay * 2, proof.maxDelayMs)) {
    if (!(await project.find(name, signal))) return;
    if (waited >= proof.budgetMs) break;
    const pause = Math.min(delay, proof.budgetMs - waited);
    await sleep(pause, undefined, { signal });
    waited += pause;
  }
  throw new ReleaseUnprovenError(
    `sandbox ${name} still exists ${Math.round(waited / 1000)} s after delete; release is not proven`,
  );
}
