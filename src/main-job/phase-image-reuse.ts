// The rerun cache's part of the main job: VM1's image layer by layer (the cached one when its key matches, else
// built and recorded for the next run), the base runtime images offered to VM1's store, the base images kept at
// the end (none holding a secret of this run), and the reuse lines of the summary.
import path from "node:path";
import type { Sandbox } from "@vercel/sandbox";
import { type BasePlan, baseLine, frontOf, planBase, readyBases } from "./base-reuse.js";
import type { RerunCache } from "./cache.js";
import type { JobContext, JobSetup } from "./context.js";
import { filesHolding } from "./evidence.js";
import { type CachedBase, type ImagePlan, planImage, reuseLine } from "./reuse.js";
import type { Services } from "./services.js";
import * as vm1 from "./vm1.js";
import { buildGatewayImage, buildPluginImage, gatewayImageInputs, pluginImageInputs } from "./vm1-image.js";

interface ImageLayer {
  name: string;
  plan: ImagePlan;
  snapshotId: string;
  captured?: string;
}

export interface Vm1Image {
  snapshotId: string;
  layers: ImageLayer[];
}

/** What the rerun cache offers this run: VM1's image and the base plan (both undefined without a cache). */
export interface ImageReuse {
  image?: Vm1Image;
  basePlan?: BasePlan;
}

/** VM1's image and the base runtime images offered to its store, when the rerun cache is in use. */
export async function planImageReuse(job: JobSetup): Promise<ImageReuse> {
  const { cache, progress, services } = job;
  const image = cache ? await vm1Image(job, cache) : undefined;
  const basePlan: BasePlan | undefined =
    cache &&
    planBase(cache.record, frontOf(services.front.url), { fresh: cache.fresh, available: services.api.restored });
  if (basePlan) {
    progress.note(
      "offer" in basePlan
        ? `offering the kept base runtime image(s) to VM1's store: ${basePlan.offer.map((b) => `${b.snapshotId} (key ${b.key.slice(0, 12)})`).join(", ")}`
        : `no base runtime image offered to VM1's store: ${basePlan.none}`,
    );
  }
  return { image, basePlan };
}

/** VM1's image, layer by layer: each the cached one when its key matches, else built (and kept for the next run). */
async function vm1Image({ progress, services, plugin, next, mode }: JobSetup, cache: RerunCache): Promise<Vm1Image> {
  const options = { fresh: cache.fresh, available: services.api.restored };
  const layer = async (name: string, plan: ImagePlan, build: () => Promise<string>): Promise<ImageLayer> => {
    if ("reuse" in plan) {
      progress.note(`reusing ${name} ${plan.reuse.snapshotId} (key ${plan.reuse.key.slice(0, 12)})`);
      return { name, plan, snapshotId: plan.reuse.snapshotId };
    }
    progress.note(`building ${name} (key ${plan.key.slice(0, 12)}): ${plan.why}`);
    const snapshotId = await build();
    return { name, plan, snapshotId, captured: snapshotId };
  };
  const record = (l: ImageLayer, inputs: Record<string, string | number>) =>
    "reuse" in l.plan
      ? l.plan.reuse
      : { key: l.plan.key, snapshotId: l.snapshotId, inputs, builtAt: new Date().toISOString() };

  const gatewayInputs = gatewayImageInputs(mode);
  const gatewayPlan = planImage(cache.record?.gateway, gatewayInputs, options);
  const gateway = await layer("VM1's gateway layer", gatewayPlan, () => buildGatewayImage(progress, services, mode));
  next.gateway = record(gateway, gatewayInputs);
  await cache.save(next);
  const pluginInputs = pluginImageInputs(next.gateway.key, plugin.bytes, mode);
  const pluginPlan = planImage(cache.record?.vm1, pluginInputs, options);
  const top = await layer("VM1's plugin layer", pluginPlan, () =>
    buildPluginImage(progress, services, plugin, gateway.snapshotId, mode),
  );
  next.vm1 = record(top, pluginInputs);
  await cache.save(next);
  return { snapshotId: top.snapshotId, layers: [gateway, top] };
}

/**
 * With the rerun cache, at the job's end: the base runtime images VM1's plugin holds are kept for the next run and
 * the cache's record saved whole (none without a cache).
 */
export async function keepBaseImages(job: JobContext, secrets: Record<string, string>): Promise<CachedBase[]> {
  const { cache, host, services, next, progress } = job;
  if (!cache) return [];
  const keptBases = await basesToKeep(
    await host.vm1(),
    services,
    (await job.snapshots()).map((s) => s.id),
    secrets,
  );
  next.base = keptBases;
  await cache.save(next);
  job.lastRunKeptReplaced();
  progress.note(
    `base runtime image(s) kept for the next run: ${keptBases.map((b) => b.snapshotId).join(", ") || "none"} (no secret of this run in them)`,
  );
  return keptBases;
}

/**
 * The base runtime images VM1's plugin holds (captured from a box no agent command touched), kept in the emulator's
 * store for the next run; a snapshot that holds any of this run's secrets is not kept (and fails the job).
 */
async function basesToKeep(
  vm1Box: Sandbox,
  services: Services,
  live: string[],
  secrets: Record<string, string>,
): Promise<CachedBase[]> {
  const text = await vm1.sh(vm1Box, "read the image store", `cat ${vm1.IMAGE_STORE} 2>/dev/null || true`);
  const bases = readyBases(text).filter((b) => live.includes(b.snapshotId));
  for (const base of bases) {
    const dir = path.join(services.dataDir, "snapshots", base.snapshotId);
    for (const [name, value] of Object.entries(secrets)) {
      if ((await filesHolding([dir], value)).length > 0) throw new Error(`${name} is in base image ${base.snapshotId}`);
    }
    await services.api.saveSnapshot(base.snapshotId);
  }
  return bases;
}

/** The summary's reuse lines: VM1's image layers, the base runtime images, and what the cache keeps. */
export function reuseLines(
  job: JobContext,
  image: Vm1Image,
  basePlan: BasePlan | undefined,
  stepsBefore: readonly string[],
  keptBases: readonly CachedBase[],
): string[] {
  return [
    ...image.layers.map((l) => reuseLine(l.name, l.plan, l.captured)),
    ...(basePlan
      ? [
          baseLine(
            basePlan,
            stepsBefore.some((l) => / runtime install /.test(l)),
            keptBases,
          ),
        ]
      : []),
    `  kept for the next run: ${job.cached().size} image(s) in ${job.cache!.dir}`,
  ];
}
