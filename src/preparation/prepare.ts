// One lease's project preparation (seed 002, the cloud-workers "Warm images" rules, issues 21 and 25), on a
// sandbox that is fresh (cold), created from the base runtime image (base) or from a project image (warm):
//   (cold, a sandbox this attempt created) the runtime install and its measurement, the clean baseline, and
//   the base image capture when due (base.ts) → core's pristine seed → our prepared checkout at the admitted
//   commit → the recipe it commits → the phases its event needs → the check that what our programs run is
//   still the baseline → (cold or base start, when an image is due) the scrub and the project image capture on
//   top of the base, and the restore. A worker started from a project image never captures.
// Failure rules: a failed detected install is recorded and skips capture, and the worker still starts; a
// failed declared recipe (devcontainer file or fallback script) is a DeclaredPreparationError, which the
// provider turns into a visible dispatch error after releasing the sandbox; a project image whose runtime
// changed is refused (ImageRefusedError), and the step falls back to a cold start.
import { type PreparationEvent, planPhases, type Recipe, RecipeError, resolveRecipe } from "../devcontainer/index.js";
import type { NodeRuntimePreparation, ProjectPreparation } from "../infra/index.js";
import { redact } from "../infra/index.js";
import type { SandboxBox, SandboxHandle, VercelProject } from "../vercel/index.js";
import { installBase, timed } from "./base.js";
import { projectTransport, recordPreparation, type SyncResult, scrubBox, syncCheckout } from "./box.js";
import { type PhaseOutcome, runPhases } from "./commands.js";
import { substitutionWarnings } from "./diagnostics.js";
import { checkoutNameOf } from "./key.js";
import { measureRuntime, RuntimeDigestError, runtimeChangedReason } from "./runtime-digest.js";
import { type ImageStore, ImageStoreFullError } from "./store.js";
import type { AllocationChoice, ImageRecord, PreparationDiagnostics, RuntimeDigest } from "./types.js";

/**
 * What our programs would run on a worker started from a project image is not the baseline recorded with it:
 * the image is refused for good, and the worker is released before any secret reached it (the provision step
 * then starts the lease again cold).
 */
export class ImageRefusedError extends Error {
  override readonly name = "ImageRefusedError";
  constructor(
    readonly snapshotId: string,
    readonly reason: string,
    /** Refused before core's seed reached the box: the same provision can still start the lease cold. */
    readonly beforeSeed: boolean,
  ) {
    super(
      `vercel-sandbox: the warm image ${snapshotId} is refused: ${reason}; no secret was handed to this worker, ` +
        "and it is released",
    );
  }
}

/**
 * Core (2026.9.4 and later) said the setup it just completed on this box must enter the reusable image before
 * enrollment (`captureRequired`), and this box cannot be captured: the dispatch fails, saying why, rather than
 * enrolling a worker whose completed setup no image holds.
 */
export class CaptureRequiredError extends Error {
  override readonly name = "CaptureRequiredError";
  constructor(readonly reason: string) {
    super(
      `vercel-sandbox: OpenClaw requires this worker's completed setup to be captured before enrollment, and it cannot be: ${reason}`,
    );
  }
}

/** A declared recipe failed or is invalid: the dispatch fails visibly, with the (capped, redacted) output. */
export class DeclaredPreparationError extends Error {
  override readonly name = "DeclaredPreparationError";
  constructor(
    readonly phase: string,
    readonly reason: string,
    readonly outputTail: string,
  ) {
    super(
      `vercel-sandbox: the repository's preparation failed in ${phase}: ${reason}${outputTail ? `\n${outputTail}` : ""}`,
    );
  }

  /** A failed phase of the recipe, as runPhases reported it (its tail already redacted and capped). */
  static of(failed: PhaseOutcome): DeclaredPreparationError {
    const reason = failed.reason ?? `exited ${failed.exitCode ?? "without a status"}`;
    return new DeclaredPreparationError(failed.phase, reason, failed.outputTail);
  }
}

export interface PrepareInput {
  leaseId: string;
  project: VercelProject;
  sandbox: SandboxHandle;
  choice: AllocationChoice;
  /** The image this lease was created from, when warm. */
  image?: ImageRecord;
  preparation: ProjectPreparation;
  store: ImageStore;
  profileKey: string;
  /** Snapshot expiration for captured images (retention deletes them earlier). */
  imageExpirationMs: number;
  /** Core's runtime for this lease, when it offered one: without it nothing is installed ahead or captured. */
  runtime?: NodeRuntimePreparation;
  /** The base key of that runtime (key.ts). */
  baseKey?: string;
  /** Whether this attempt created the sandbox: only such a cold box is measured as a clean baseline. */
  created?: boolean;
  /** Told of each step with its duration as it ends. */
  progress?: (step: string, ms: number) => void;
  installRuntime: (box: SandboxBox, runtime: NodeRuntimePreparation, signal: AbortSignal) => Promise<void>;
  /** Opens the sandbox's egress for preparation: the package registry, the profile's additions, these hosts. */
  openEgress: (on: { sandbox: SandboxHandle; runtimeUrl?: string }) => Promise<void>;
  signal?: AbortSignal;
  now?: () => number;
}

export interface PrepareOutcome {
  /** The sandbox to go on with: a capture restores it as a new session. */
  sandbox: SandboxHandle;
  recipe: Recipe;
  checkout: string;
  diagnostics: PreparationDiagnostics;
}

export async function prepareProject(input: PrepareInput): Promise<PrepareOutcome> {
  const now = input.now ?? Date.now;
  const progress = input.progress ?? (() => undefined);
  const started = now();
  const { preparation, project, image } = input;
  const signal = input.signal ? AbortSignal.any([input.signal, preparation.signal]) : preparation.signal;
  let box = project.box(input.sandbox);
  let sandbox = input.sandbox;
  const current = () => {
    signal.throwIfAborted();
    preparation.assertCurrent();
  };
  const start: PreparationDiagnostics["start"] = !image ? "cold" : image.kind === "base" ? "base" : "warm";
  const firstRun = (await input.store.choiceFor(input.leaseId))?.phase === "pending";

  current();
  // The baseline: what the base image recorded before any recipe ran, or, cold, measured now before any does.
  let baseline = image?.runtime;
  let baseImageId = image?.kind === "base" ? image.snapshotId : image?.baseImage;
  let baseCaptureSkipped: string | undefined;
  if (start === "cold" && input.runtime && input.baseKey && input.created && firstRun) {
    const base = await installBase({
      ...input,
      baseKey: input.baseKey,
      runtime: input.runtime,
      box,
      progress,
      signal,
      current,
      now,
    });
    current();
    ({ sandbox, baseline } = base);
    box = project.box(sandbox);
    baseImageId = base.captured?.snapshotId;
    baseCaptureSkipped = base.skipped;
  }

  // A project image is checked first, before core's seed (which core hands over once per provision): a
  // refusal here leaves the provision free to start the lease cold. Its recipe does not run at the same commit.
  // An image verified right after its capture is the same files on every restore: it is not measured again.
  if (start === "warm" && image && baseline && firstRun && image.runtimeVerifiedAt === undefined) {
    const changed = await timed(progress, "runtime check", () => runtimeChangedOn(box, baseline, signal));
    current();
    if (changed) {
      await input.store.refuse(image.snapshotId, changed, now());
      await input.store.recordDiagnostics(
        refusedDiagnostics(input, image.snapshotId, changed, now() - started, started),
      );
      throw new ImageRefusedError(image.snapshotId, changed, true);
    }
  }

  const seed = await timed(progress, "seed", () => preparation.prepare(projectTransport(box)));
  current();
  // 2026.9.4+: core ran new setup (repository code) inside `prepare`; it must enter the image before enrollment.
  const captureRequired = (seed as { captureRequired?: unknown }).captureRequired === true;
  const at = { project: checkoutNameOf(preparation.key), baseCommit: preparation.baseCommit };
  const synced = await syncCheckout(box, { ...at, seedKey: seed.seedKey }, signal);
  current();
  const recipe = recipeOf(synced);
  const previous = synced.previous;
  const event: PreparationEvent & ("initial" | "refresh" | "unchanged") =
    previous?.identity !== recipe.identity
      ? "initial"
      : previous.baseCommit === preparation.baseCommit
        ? "unchanged"
        : "refresh";
  const diagnostics: PreparationDiagnostics = {
    leaseId: input.leaseId,
    at: started,
    key: input.choice.key,
    projectKey: preparation.key,
    baseCommit: preparation.baseCommit,
    recipe: {
      source: recipe.source,
      ...(recipe.file ? { file: recipe.file } : {}),
      identity: recipe.identity,
      ...(recipe.ignoredNote ? { ignoredNote: recipe.ignoredNote } : {}),
      notes: [...recipe.notes],
      warnings: substitutionWarnings(recipe),
    },
    start,
    seedCacheHit: seed.cacheHit,
    event,
    phases: [],
    ...(image && start === "warm" ? { imageId: image.snapshotId } : {}),
    ...(baseImageId ? { baseImageId } : {}),
    ...(baseCaptureSkipped ? { baseCaptureSkipped } : {}),
    captured: false,
    totalMs: 0,
  };
  const finish = async (out: SandboxHandle) => {
    diagnostics.totalMs = now() - started;
    await input.store.recordDiagnostics(diagnostics);
    return { sandbox: out, recipe, checkout: synced.checkout, diagnostics };
  };

  const phases = planPhases(recipe, event);
  // Egress opens only for work that needs it (the recipe's commands, the runtime download): a warm start at
  // the same commit never changes the policy before enrollment does.
  if (phases.length > 0) await input.openEgress({ sandbox });
  const ran = await timed(progress, "recipe", () => runPhases(phases, recipe, { box, cwd: synced.checkout, signal }));
  current();
  diagnostics.phases = ran.reports.map(({ outputTail: _tail, reason: _reason, ...report }) => report);
  if (ran.failed) {
    const failure = DeclaredPreparationError.of(ran.failed);
    diagnostics.failure = { phase: ran.failed.phase, reason: failure.reason, outputTail: failure.outputTail };
    if (recipe.source !== "detected") {
      await finish(sandbox);
      throw failure;
    }
    if (captureRequired) {
      diagnostics.captureSkipped = "the detected dependency install failed";
      await finish(sandbox);
      throw new CaptureRequiredError("the detected dependency install failed, so this box is no image's source");
    }
    diagnostics.captureSkipped = "the detected dependency install failed; the worker starts without an image";
    return finish(sandbox);
  }
  // Before any secret reaches this box (enrollment's), on the lease's first preparation only: a replay past
  // `pending` may find the runtime changed by enrollment or the agent on that box, which says nothing about an
  // image. A project image whose runtime changed is refused; this worker's own recipe changing it (cold or
  // base start) only keeps this box from being captured.
  let changed: string | undefined;
  if (baseline && firstRun && (phases.length > 0 || captureRequired)) {
    changed = await timed(progress, "runtime check", () => runtimeChangedOn(box, baseline, signal));
    current();
  }
  if (changed && image && start === "warm") {
    await input.store.refuse(image.snapshotId, changed, now());
    diagnostics.failure = { phase: "runtime check", reason: changed, outputTail: "" };
    await finish(sandbox);
    throw new ImageRefusedError(image.snapshotId, changed, false);
  }
  if (changed) {
    // This commit's own recipe replaced what enrollment would run: nothing of ours runs it, and no secret
    // reaches this box; the dispatch fails as the recipe's (visible, after the release).
    const reason = `this commit's recipe changed what the plugin's programs run: ${changed}; no secret is handed to this worker`;
    diagnostics.failure = { phase: "runtime check", reason, outputTail: "" };
    diagnostics.captureSkipped = "the recipe changed the runtime";
    await finish(sandbox);
    throw new DeclaredPreparationError("runtime check", reason, "");
  }
  // The record already says so when nothing changed (a warm start at the same commit and recipe).
  if (event !== "unchanged") {
    await recordPreparation(box, { ...at, identity: recipe.identity }, signal);
    current();
  }

  const skip = await captureSkipReason(input, start, baseline, captureRequired);
  if (skip?.required) {
    diagnostics.captureSkipped = skip.reason;
    diagnostics.failure = { phase: "capture", reason: skip.reason, outputTail: "" };
    await finish(sandbox);
    throw new CaptureRequiredError(skip.reason);
  }
  if (skip) {
    diagnostics.captureSkipped = skip.reason;
    return finish(sandbox);
  }
  await timed(progress, "scrub", () => scrubBox(box, signal));
  current();
  const snapshotId = await timed(progress, "capture", () => project.capture(sandbox, input.imageExpirationMs, signal));
  await input.store.recordImage({
    snapshotId,
    key: input.choice.key,
    ...(input.baseKey ? { baseKey: input.baseKey } : {}),
    ...(baseImageId ? { baseImage: baseImageId } : {}),
    profileKey: input.profileKey,
    projectKey: preparation.key,
    baseCommit: preparation.baseCommit,
    recipeIdentity: recipe.identity,
    recipeSource: recipe.source,
    sourceLeaseId: input.leaseId,
    createdAt: now(),
    lastUsedAt: now(),
    state: "ready",
    runtime: baseline,
  });
  diagnostics.captured = true;
  diagnostics.imageId = snapshotId;
  current();
  const restored = await timed(progress, "restore", () => project.restore(sandbox, snapshotId, signal));
  current();
  // A process the recipe (or core's setup) left running could change the runtime between the check above and the
  // capture. The image is measured once, here, on its first restore (nothing ran on it yet): no worker started
  // from it measures it again, and this one hands no secret to a changed runtime. Where nothing of the repository
  // ran, nothing could: the image is what the baseline measured.
  const untrusted = phases.length > 0 || captureRequired;
  const drift = untrusted
    ? await timed(progress, "runtime check", () => runtimeChangedOn(project.box(restored), baseline, signal))
    : undefined;
  current();
  if (drift) {
    await input.store.refuse(snapshotId, drift, now());
    const reason = `the runtime changed after this commit's recipe ended, before its capture (a process it left running): ${drift}; no secret is handed to this worker`;
    diagnostics.failure = { phase: "runtime check", reason, outputTail: "" };
    await finish(restored);
    throw new DeclaredPreparationError("runtime check", reason, "");
  }
  await input.store.markVerified(snapshotId, now());
  return finish(restored);
}

/**
 * A lease's choice leaves `pending` before its enrollment is first attempted: from then on its sandbox may hold
 * what enrollment or the agent put there, so no replay that adopts it ever captures it.
 */
export const ENROLLMENT_MAY_HAVE_RUN =
  "enrollment may have run on this sandbox (the store records its lease past preparation), so it is never the source of an image";

/** What `images` shows of a worker that refused its image before reading the checkout. */
function refusedDiagnostics(
  input: PrepareInput,
  snapshotId: string,
  reason: string,
  totalMs: number,
  at: number,
): PreparationDiagnostics {
  return {
    leaseId: input.leaseId,
    at,
    key: input.choice.key,
    projectKey: input.preparation.key,
    baseCommit: input.preparation.baseCommit,
    recipe: { source: "none", identity: "", notes: ["not read: the image was refused first"], warnings: [] },
    start: "warm",
    event: "unchanged",
    phases: [],
    failure: { phase: "runtime check", reason, outputTail: "" },
    imageId: snapshotId,
    captured: false,
    captureSkipped: "the image was refused",
    totalMs,
  };
}

/**
 * Why no project image is captured this time, or undefined when one is due. `required`: core asked for the
 * capture (`captureRequired`) and the reason is one that leaves this box uncaptured for want of a way, not of
 * authority, so the provision fails with it. Capture authority stays as it is: a lease past preparation never
 * captures, one that already captured is done, and a warm start captures only on top of the image generation it
 * was started from while that is still its key's current one (core's "preserving the selected image
 * generation's capture authority").
 */
async function captureSkipReason(
  input: PrepareInput,
  start: PreparationDiagnostics["start"],
  baseline: RuntimeDigest | undefined,
  captureRequired: boolean,
): Promise<{ reason: string; required?: true } | undefined> {
  const must = (reason: string) => ({ reason, ...(captureRequired ? { required: true as const } : {}) });
  if (!input.runtime) return must("the gateway offered no node runtime preparation, so nothing is captured");
  // Only our store decides: the box's own record is the box's to edit, and a replay reads it again.
  const recorded = await input.store.choiceFor(input.leaseId);
  if (recorded?.phase !== "pending") return { reason: ENROLLMENT_MAY_HAVE_RUN };
  if (start === "warm") {
    if (!captureRequired) {
      return {
        reason: "a worker started from a project image never captures: each project image is built on the clean base",
      };
    }
    const current = await input.store.usable(input.choice.key, {
      baseCommit: input.preparation.baseCommit,
      ...(input.baseKey ? { baseKey: input.baseKey } : {}),
    });
    if (current?.snapshotId !== input.image?.snapshotId) {
      return {
        reason:
          "core required a capture, but a newer image of this key exists: the capture authority is that generation's",
      };
    }
  }
  const captured = (await input.store.images()).some((i) => i.sourceLeaseId === input.leaseId && i.kind !== "base");
  if (captured) return { reason: "this lease already captured its image" };
  if (!baseline) {
    return must(
      "no clean runtime measurement (the sandbox was adopted, not created, by this attempt), so nothing is captured",
    );
  }
  try {
    await input.store.assertRoomForImage(input.choice.key);
  } catch (error) {
    if (error instanceof ImageStoreFullError) return must(error.message);
    throw error;
  }
  return undefined;
}

/** Why the runtime on the box is not the one captured with the image; an unreadable measurement is a reason too. */
async function runtimeChangedOn(box: SandboxBox, recorded: RuntimeDigest | undefined, signal: AbortSignal) {
  if (!recorded) return "no runtime baseline to compare with";
  try {
    return runtimeChangedReason(recorded, await measureRuntime(box, signal));
  } catch (error) {
    if (error instanceof RuntimeDigestError) return error.message;
    throw error;
  }
}

/** The recipe the admitted commit declares; an invalid declared recipe is the dispatch's error, never a fallback. */
function recipeOf(synced: SyncResult): Recipe {
  const files = Object.fromEntries(
    Object.entries(synced.files).map(([name, b64]) => [name, new Uint8Array(Buffer.from(b64, "base64"))]),
  );
  try {
    return resolveRecipe({
      files,
      executables: synced.executables,
      hasCommand: (name) => synced.commands[name] === true,
    });
  } catch (error) {
    if (error instanceof RecipeError) throw new DeclaredPreparationError("recipe", redact(error.message), "");
    throw error;
  }
}
