// Releasing a sandbox with proof: delete it (with the snapshots it owns that no warm image retains), then
// look it up again; only a "does not exist" answer counts as released.
import type { VercelProject } from "./client.js";

export type RetainedSnapshots = (sandboxName: string) => Promise<ReadonlySet<string>>;

export class ReleaseUnprovenError extends Error {
  override readonly name = "ReleaseUnprovenError";
}

export async function releaseSandbox(
  project: VercelProject,
  sandboxName: string,
  retained: RetainedSnapshots,
  signal?: AbortSignal,
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
  if (await project.find(sandboxName, signal)) {
    throw new ReleaseUnprovenError(`sandbox ${sandboxName} still exists after delete; release is not proven`);
  }
  return "released";
}
