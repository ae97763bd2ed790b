// Which checkpoints (snapshots) of VM1 to delete after a sleep: keep the newest `keep` that exist, delete every
// older one. Pure; vm.ts does the I/O and proves each deletion. `keep` is at least 1: the newest checkpoint is
// what a wake resumes from, so a retention of zero is refused rather than quietly read as one.

export interface CheckpointInfo {
  id: string;
  status: string;
  createdAt: number;
}

/** Throws a RangeError unless `keep` is a whole number of at least 1. */
export function checkKeep(keep: number): void {
  if (!Number.isInteger(keep) || keep < 1) {
    throw new RangeError(
      `keep must be a whole number of checkpoints, at least 1 (got ${keep}): a wake resumes from the newest checkpoint`,
    );
  }
}

export function checkpointsToDelete(checkpoints: CheckpointInfo[], keep: number): string[] {
  checkKeep(keep);
  const live = checkpoints.filter((c) => c.status === "created").sort((a, b) => b.createdAt - a.createdAt);
  return live.slice(keep).map((c) => c.id);
}
