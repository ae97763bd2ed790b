// Which checkpoints (snapshots) of VM1 to delete after a sleep: keep the newest `keep` that exist, delete every
// older one. Pure; vm.ts does the I/O and proves each deletion.

export interface CheckpointInfo {
  id: string;
  status: string;
  createdAt: number;
}

export function checkpointsToDelete(checkpoints: CheckpointInfo[], keep: number): string[] {
  const live = checkpoints.filter((c) => c.status === "created").sort((a, b) => b.createdAt - a.createdAt);
  return live.slice(Math.max(1, keep)).map((c) => c.id);
}
