// The main job's evidence once the third reply is in (evidence.ts holds the readers): no secret on VM1's disk, the
// model's key in no file of VM1's layer or checkpoints (it answered only requests VM1's firewall added it to), no
// secret of this run in VM1's image layers; then the caller's `inspect`, before anything is deleted.
import path from "node:path";
import { listCheckpoints } from "../host/index.js";
import type { JobContext } from "./context.js";
import { filesHolding, secretsOnDisk, type Vm1OnDisk, vm1OnDisk } from "./evidence.js";
import type { Vm1Image } from "./phase-image-reuse.js";
import type { ModelKeyEvidence } from "./report.js";

export interface Evidence {
  /** The names of the secrets found on VM1's disk (none, or the job failed). */
  secretsOnVm1: string[];
  vm1Disk: Vm1OnDisk;
  modelKey: ModelKeyEvidence;
}

export async function gatherEvidence(job: JobContext, image: Vm1Image | undefined): Promise<Evidence> {
  const { progress, host, secrets, services, box, options } = job;
  const secretsOnVm1 = await secretsOnDisk(await host.vm1(), [...Object.values(secrets), services.modelKey]);
  progress.note(`secrets on VM1's disk: ${secretsOnVm1.length === 0 ? "none" : secretsOnVm1.join(", ")}`);
  // Every checkpoint VM1 ever had, deleted ones too: with layered snapshots a deleted checkpoint's layer stays on
  // disk while a later one stands on it (vm1OnDisk keeps the directories that still exist).
  const checkpoints = await listCheckpoints(services.connection, box.name);
  const handedOver = services.front.handedOver().map((h, i) => [`${h.name}#${i + 1}`, h.value] as const);
  const vm1Disk = await vm1OnDisk(
    services.dataDir,
    box.name,
    checkpoints.map((c) => c.id),
    { ...secrets, modelKey: services.modelKey, ...Object.fromEntries(handedOver) },
  );
  const modelKey = {
    answered: services.model.completions(),
    refused: services.model.refused(),
    filesOnVm1: await filesHolding([...vm1Disk.sandboxDirs, ...vm1Disk.checkpointDirs], services.modelKey),
    checkpoints: vm1Disk.checkpointDirs.length,
  };
  progress.note(
    `model key: in ${modelKey.filesOnVm1.length} file(s) of VM1's layer and ${modelKey.checkpoints} checkpoint(s); the model answered ${modelKey.answered} request(s) carrying it, refused ${modelKey.refused}`,
  );
  if (modelKey.filesOnVm1.length > 0)
    throw new Error(`the model key is on VM1's disk: ${modelKey.filesOnVm1.join(", ")}`);
  if (image) {
    // VM1's image layers are under every checkpoint: none of this run's secrets may be in them (built before the
    // gateway ever got one; reused ones by an earlier run, whose secrets are gone with it).
    const imageDirs = image.layers.map((l) => path.join(services.dataDir, "snapshots", l.snapshotId));
    const inImage: string[] = [];
    for (const [name, value] of Object.entries(vm1Disk.secrets)) {
      if ((await filesHolding(imageDirs, value)).length > 0) inImage.push(name);
    }
    progress.note(
      `secrets in VM1's image layers ${image.layers.map((l) => l.snapshotId).join(", ")}: ${inImage.length === 0 ? "none" : inImage.join(", ")}`,
    );
    if (inImage.length > 0) throw new Error(`secrets in VM1's image: ${inImage.join(", ")}`);
  }
  if (options.inspect) await options.inspect(vm1Disk);
  return { secretsOnVm1, vm1Disk, modelKey };
}
