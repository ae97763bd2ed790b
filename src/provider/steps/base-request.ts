// Step 2b for a worker without a project (core's `environments.create`), only when `images warm` asked for it
// (preparation/warm-request.ts): on the sandbox this attempt has just created cold, before enrollment, the base
// step of a cold provision (preparation/base.ts): core's runtime installed and measured, and, when no base image
// of its key exists, the box scrubbed, captured as the base image and restored. Nothing but our runtime program
// has run there. A worker without a project that started from a current base image (steps/warm-images.ts)
// answers the request instead: the base image it stands on is current, so there is nothing to build. The
// diagnostics record what happened under the lease, which is how `images warm` learns it.
import { registerSecret } from "../../infra/index.js";
import {
  BASE_EXISTS,
  baseKeyOf,
  installBase,
  type PreparationDiagnostics,
  profileKeyOf,
  takeBaseImageRequest,
} from "../../preparation/index.js";
import type { SandboxHandle } from "../../vercel/index.js";
import { egressPolicy, gatewayHostOf } from "../policy.js";
import type { ProvisionRun, StepContext } from "./run.js";
import { imageExpirationMs, type StartChoice, type WarmImages } from "./warm-images.js";

/** Returns the sandbox to enroll: `sandbox`, or its restored session after a capture. */
export async function baseOnRequest(
  run: ProvisionRun,
  context: StepContext,
  sandbox: SandboxHandle,
  images: WarmImages,
  stateDir: string | undefined,
): Promise<SandboxHandle> {
  const prepare = run.options.prepareNodeRuntime;
  if (run.options.project || !run.created || !run.settings.warmImage || !prepare) return sandbox;
  const profileKey = profileKeyOf(run.settings, run.vcpus);
  if (!(await takeBaseImageRequest(stateDir, profileKey, Date.now()))) return sandbox;
  const { leaseId } = run.allocation;
  const runtime = await prepare();
  registerSecret(runtime.nodeBootstrap.token, leaseId);
  registerSecret(runtime.workerBundle.token, leaseId);
  const baseKey = baseKeyOf(profileKey, runtime);
  const started = Date.now();
  const signal = run.options.signal ?? new AbortController().signal;
  const base = await installBase({
    leaseId,
    project: run.project,
    sandbox,
    box: run.project.box(sandbox),
    store: images.store,
    profileKey,
    baseKey,
    runtime,
    imageExpirationMs: imageExpirationMs(run.settings.images.unusedForMs),
    installRuntime: (box, r, s) => images.installRuntime(leaseId, box, r, s),
    openEgress: async ({ sandbox: current, runtimeUrl }) => {
      if (run.settings.networkPolicy === "allow-all") return;
      const gateway = runtimeUrl ? gatewayHostOf(runtimeUrl) : undefined;
      await run.project.updateNetworkPolicy(
        current,
        egressPolicy(run.settings, gateway ? [gateway] : [], "bootstrap"),
        signal,
      );
    },
    progress: (step, ms) => context.logger.info?.(`vercel-sandbox ${leaseId}: ${step} ${ms} ms`),
    signal,
    current: () => signal.throwIfAborted(),
    now: Date.now,
  });
  const diagnostics: PreparationDiagnostics = {
    ...withoutProject(leaseId, started, baseKey, "images warm: the base step of a worker without a project"),
    start: "cold",
    ...(base.captured ? { baseImageId: base.captured.snapshotId, imageId: base.captured.snapshotId } : {}),
    ...(base.skipped ? { baseCaptureSkipped: base.skipped, captureSkipped: base.skipped } : {}),
    captured: base.captured !== undefined,
    totalMs: Date.now() - started,
  };
  await images.store.recordDiagnostics(diagnostics);
  const outcome = base.captured
    ? `captured base image ${base.captured.snapshotId}`
    : `no base capture: ${base.skipped}`;
  context.logger.info?.(`vercel-sandbox ${leaseId}: images warm base step: ${outcome}`);
  return base.sandbox;
}

/**
 * A worker without a project created from the base image (its start chosen in warm-images.ts): the image counts
 * as used, enrollment reuses its runtime, and an `images warm` request for this shape is answered: a current base
 * image of the key exists, nothing is built.
 */
export async function baseStarted(
  run: ProvisionRun,
  context: StepContext,
  start: StartChoice,
  images: WarmImages,
  stateDir: string | undefined,
): Promise<void> {
  const { image, baseKey } = start;
  if (!image || !baseKey) return;
  const { leaseId } = run.allocation;
  await images.store.touch(image.snapshotId, Date.now());
  context.logger.info?.(
    `vercel-sandbox ${leaseId}: started from base image ${image.snapshotId}; enrollment reuses its runtime`,
  );
  if (!(await takeBaseImageRequest(stateDir, start.profileKey, Date.now()))) return;
  await images.store.recordDiagnostics({
    ...withoutProject(
      leaseId,
      Date.now(),
      baseKey,
      "images warm: a worker without a project started from the current base image",
    ),
    start: "base",
    baseImageId: image.snapshotId,
    baseCaptureSkipped: BASE_EXISTS,
    captureSkipped: BASE_EXISTS,
    captured: false,
    totalMs: 0,
  });
}

/** The diagnostics fields every worker without a project records under its lease: no project, no recipe. */
function withoutProject(leaseId: string, at: number, key: string, note: string) {
  return {
    leaseId,
    at,
    key,
    projectKey: "",
    baseCommit: "",
    recipe: { source: "none" as const, identity: "", notes: [note], warnings: [] },
    event: "initial" as const,
    phases: [],
  };
}
