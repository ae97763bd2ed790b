// Steps 1b and 3 for leases whose project can be prepared (core passed `options.project` and the profile keeps
// warm images on): the recorded start — the project's image at this commit, else the base runtime image of
// core's runtime, else cold — chosen before any Vercel request and reused by every replay and restart; then the
// preparation itself (src/preparation). A lease without a project starts from the base image when one exists
// (step 1b only: it has nothing to prepare). A warm create whose image has vanished fails visibly instead of
// silently switching the recorded choice; a project image its worker refuses (runtime changed) is released
// and the lease falls back to a cold start within the same provision. The credentials core hands over for the
// runtime are registered for redaction first.
import { WorkerProviderError } from "openclaw/plugin-sdk/plugin-entry";
import type { NodeRuntimePreparation } from "../../infra/index.js";
import { registerSecret } from "../../infra/index.js";
import type { AllocationChoice, ImageRecord } from "../../preparation/index.js";
import {
  baseKeyOf,
  ImageRefusedError,
  type ImageStore,
  ImageUnusableError,
  imageKeyOf,
  type PrepareOutcome,
  prepareProject,
  profileKeyOf,
} from "../../preparation/index.js";
import type { SandboxBox, SandboxHandle } from "../../vercel/index.js";
import { isFailure } from "../../vercel/index.js";
import { egressPolicy, gatewayHostOf } from "../policy.js";
import { releaseSandbox } from "../release.js";
import { createOrAdopt } from "./create-or-adopt.js";
import type { ProvisionRun, StepContext } from "./run.js";

export interface WarmImages {
  store: ImageStore;
  installRuntime: (
    leaseId: string,
    box: SandboxBox,
    runtime: NodeRuntimePreparation,
    signal: AbortSignal,
  ) => Promise<void>;
}

export interface StartChoice {
  choice: AllocationChoice;
  image?: ImageRecord;
  profileKey: string;
  /** Core's runtime for this lease and its base key, when core offered one. */
  runtime?: NodeRuntimePreparation;
  baseKey?: string;
}

/** Snapshots outlive the unused-image age by a day, so retention (not expiry) is what normally removes them. */
const EXPIRY_MARGIN_MS = 24 * 60 * 60_000;

/** 0 (`unusedFor: 0`, never deleted for being unused) keeps the snapshot without expiry too. */
export function imageExpirationMs(unusedForMs: number): number {
  return unusedForMs === 0 ? 0 : unusedForMs + EXPIRY_MARGIN_MS;
}

/**
 * The lease's recorded start; recorded now when this is its first attempt. A worker with a project starts from
 * its project image, else the base image, else cold; one without a project (core's `environments.create`, a
 * session outside a Git project) from the base image of its shape and runtime when one exists, else cold as
 * before (nothing recorded, and core's runtime not asked for unless some base image of the shape exists).
 */
export async function chooseStart(run: ProvisionRun, images: WarmImages): Promise<StartChoice | undefined> {
  if (!run.settings.warmImage) return undefined;
  const project = run.options.project;
  const { leaseId } = run.allocation;
  const profileKey = profileKeyOf(run.settings, run.vcpus);
  // Core's runtime is asked for a worker without a project only when a base image of its shape might serve it.
  if (!project && !(await images.store.hasUsableBase(profileKey))) return undefined;
  const runtime = await runtimeFor(run)?.();
  const baseKey = runtime ? baseKeyOf(profileKey, runtime) : undefined;
  if (!project && !baseKey) return undefined;
  const key = project ? imageKeyOf(profileKey, project.key, run.settings.imageSharing) : (baseKey as string);
  const known = { profileKey, ...(runtime ? { runtime } : {}), ...(baseKey ? { baseKey } : {}) };
  const recorded = await images.store.choiceFor(leaseId);
  if (recorded) {
    if (recorded.key !== key) {
      throw new WorkerProviderError(
        `vercel-sandbox: lease ${leaseId} was recorded for another profile shape or project; a replay cannot change it`,
      );
    }
    const image =
      recorded.choice.kind === "image"
        ? (await images.store.images()).find(
            (i) => i.snapshotId === (recorded.choice as { snapshotId: string }).snapshotId,
          )
        : undefined;
    return { choice: recorded, image, ...known };
  }
  // A project image only at this commit and on this runtime; otherwise the clean base of this runtime.
  const image =
    (project && baseKey && (await images.store.usable(key, { baseCommit: project.baseCommit, baseKey }))) ||
    (baseKey ? await images.store.usable(baseKey) : undefined);
  // Without a project there is no cold choice to record: the worker provisions as it always did.
  if (!project && !image) return undefined;
  const choiceOf = (from?: ImageRecord): AllocationChoice => ({
    leaseId,
    key,
    profileKey,
    choice: from ? { kind: "image", snapshotId: from.snapshotId } : { kind: "cold" },
    recordedAt: Date.now(),
    phase: "pending",
  });
  try {
    const choice = choiceOf(image);
    await images.store.recordChoice(choice);
    return { choice, image, ...known };
  } catch (error) {
    // Retention claimed the image between the lookup and the record: start cold instead.
    if (!(error instanceof ImageUnusableError)) throw error;
    if (!project) return undefined;
    const choice = choiceOf();
    await images.store.recordChoice(choice);
    return { choice, ...known };
  }
}

/** The snapshot a lease's sandbox is created from, if its recorded start is an image. */
export function imageOf(start: StartChoice | undefined): string | undefined {
  return start?.choice.choice.kind === "image" ? start.choice.choice.snapshotId : undefined;
}

/** A warm create that failed because the image is gone: recorded, and turned into a visible error. */
export async function imageGone(error: unknown, start: StartChoice | undefined, images: WarmImages) {
  const snapshotId = imageOf(start);
  if (!snapshotId || !isFailure(error, "not_found", "gone")) return error;
  await images.store.markMissing(snapshotId);
  return new WorkerProviderError(
    `vercel-sandbox: the warm image ${snapshotId} this worker was recorded to start from no longer exists; dispatch again (a new dispatch starts cold or from a newer image)`,
  );
}

/**
 * Core's runtime preparation, its credentials registered for redaction as they arrive (scoped to the lease,
 * like enrollment's): the runtime's and the worker bundle's bearer tokens travel to the box for the capture.
 */
function runtimeFor(run: ProvisionRun): (() => Promise<NodeRuntimePreparation>) | undefined {
  const prepare = run.options.prepareNodeRuntime;
  if (!prepare) return undefined;
  const { leaseId } = run.allocation;
  return async () => {
    const runtime = await prepare();
    registerSecret(runtime.nodeBootstrap.token, leaseId);
    registerSecret(runtime.workerBundle.token, leaseId);
    return runtime;
  };
}

export async function prepareStep(
  run: ProvisionRun,
  context: StepContext,
  sandbox: SandboxHandle,
  start: StartChoice,
  images: WarmImages,
): Promise<PrepareOutcome> {
  const { leaseId } = run.allocation;
  let outcome: PrepareOutcome;
  try {
    outcome = await prepareOn(run, context, sandbox, start, images);
  } catch (error) {
    // Refused after core's seed (its recipe ran at a changed record): the provision fails, the next starts cold.
    if (!(error instanceof ImageRefusedError) || !error.beforeSeed) throw error;
    outcome = await fallBackCold(run, context, start, images, error);
  }
  const d = outcome.diagnostics;
  const phases = d.phases.map((p) => `${p.phase} ${p.ok ? "ok" : "failed"} ${p.ms} ms`).join(", ") || "no phase";
  const image = d.captured ? `captured image ${d.imageId}` : `no capture: ${d.captureSkipped}`;
  const base = d.baseImageId
    ? `; base image ${d.baseImageId}`
    : d.baseCaptureSkipped
      ? `; no base capture: ${d.baseCaptureSkipped}`
      : "";
  context.logger.info?.(
    `vercel-sandbox ${leaseId}: preparation ${d.start} ${d.event}, recipe ${d.recipe.source}; ${phases}; ${image}${base}`,
  );
  for (const warning of d.recipe.warnings) context.logger.warn(`vercel-sandbox ${leaseId}: recipe: ${warning}`);
  await images.store.advanceChoice(leaseId, "prepared");
  context.step("prepared", leaseId);
  return outcome;
}

async function prepareOn(
  run: ProvisionRun,
  context: StepContext,
  sandbox: SandboxHandle,
  start: StartChoice,
  images: WarmImages,
): Promise<PrepareOutcome> {
  const { leaseId } = run.allocation;
  if (start.image) await images.store.touch(start.image.snapshotId, Date.now());
  return prepareProject({
    leaseId,
    project: run.project,
    sandbox,
    choice: start.choice,
    image: start.image,
    preparation: run.options.project as NonNullable<ProvisionRun["options"]["project"]>,
    store: images.store,
    profileKey: start.profileKey,
    imageExpirationMs: imageExpirationMs(run.settings.images.unusedForMs),
    ...(start.runtime ? { runtime: start.runtime } : {}),
    ...(start.baseKey ? { baseKey: start.baseKey } : {}),
    created: run.created === true,
    progress: (step, ms) => context.logger.info?.(`vercel-sandbox ${leaseId}: ${step} ${ms} ms`),
    installRuntime: (box, runtime, signal) => images.installRuntime(leaseId, box, runtime, signal),
    openEgress: async ({ sandbox: current, runtimeUrl }) => {
      if (run.settings.networkPolicy === "allow-all") return;
      const gateway = runtimeUrl ? gatewayHostOf(runtimeUrl) : undefined;
      const policy = egressPolicy(run.settings, gateway ? [gateway] : [], "bootstrap");
      await run.project.updateNetworkPolicy(current, policy, run.options.signal);
    },
    signal: run.options.signal,
  });
}

/**
 * The worker refused its project image before any secret reached it: the image is marked (the store keeps the
 * reason, `images` shows it), this sandbox is released with proof, and the lease starts again cold in the same
 * provision, its choice changed once in the store so that a replay follows it.
 */
async function fallBackCold(
  run: ProvisionRun,
  context: StepContext,
  start: StartChoice,
  images: WarmImages,
  refused: ImageRefusedError,
): Promise<PrepareOutcome> {
  const { leaseId, sandboxName } = run.allocation;
  context.logger.warn(`vercel-sandbox ${leaseId}: ${refused.message}; falling back to a cold start`);
  await releaseSandbox(run.project, sandboxName, context.retained, undefined, context.absenceProof);
  run.mayExist = false;
  const choice = await images.store.fallBackCold(leaseId, Date.now());
  const cold: StartChoice = { ...start, choice, image: undefined };
  const sandbox = await createOrAdopt(run, context, undefined);
  return prepareOn(run, context, sandbox, cold, images);
}
