// One lease's project preparation (seed 002 and the cloud-workers "Warm images" rules), on a sandbox that is
// either fresh (cold) or created from a warm image:
//   core's pristine seed → our prepared checkout at the admitted commit → the recipe it commits → the phases
//   its event needs → (warm) the check that what our programs run is what the image was captured with →
//   (when an image is due) the node runtime, the scrub, the measurement of the runtime, the capture, the restore.
// Failure rules: a failed detected install is recorded and skips capture, and the worker still starts; a
// failed declared recipe (devcontainer file or fallback script) is a DeclaredPreparationError, which the
// provider turns into a visible dispatch error after releasing the sandbox.
import { type PreparationEvent, planPhases, type Recipe, RecipeError, resolveRecipe } from "../devcontainer/index.js";
import type { NodeRuntimePreparation, ProjectPreparation } from "../infra/index.js";
import { redact } from "../infra/index.js";
import type { SandboxBox, SandboxHandle, VercelProject } from "../vercel/index.js";
import { projectTransport, recordPreparation, type SyncResult, scrubBox, syncCheckout } from "./box.js";
import { type PhaseOutcome, runPhases } from "./commands.js";
import { substitutionWarnings } from "./diagnostics.js";
import { checkoutNameOf, imageCurrentReason } from "./key.js";
import { measureRuntime, RuntimeDigestError, runtimeChangedReason } from "./runtime-digest.js";
import { type ImageStore, ImageStoreFullError } from "./store.js";
import type { AllocationChoice, ImageRecord, PreparationDiagnostics, RuntimeDigest } from "./types.js";

/**
 * What our programs would run on a worker started from an image is not what was captured with it: the image is
 * refused for good, this worker released, and a new dispatch starts cold (or from another image).
 */
export class ImageRefusedError extends Error {
  override readonly name = "ImageRefusedError";
  constructor(
    readonly snapshotId: string,
    readonly reason: string,
  ) {
    super(
      `vercel-sandbox: the warm image ${snapshotId} is refused: ${reason}; no secret was handed to this worker, ` +
        "it is released, and a new dispatch starts without that image",
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
  prepareNodeRuntime?: () => Promise<NodeRuntimePreparation>;
  installRuntime: (box: SandboxBox, runtime: NodeRuntimePreparation, signal: AbortSignal) => Promise<void>;
  /** Opens the sandbox's egress for preparation: the package registry, the profile's additions, these hosts. */
  openEgress: (hostsOf: { runtimeUrl?: string }) => Promise<void>;
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
  const started = now();
  const { preparation, project } = input;
  const signal = input.signal ? AbortSignal.any([input.signal, preparation.signal]) : preparation.signal;
  const box = project.box(input.sandbox);
  const current = () => {
    signal.throwIfAborted();
    preparation.assertCurrent();
  };

  current();
  const seed = await preparation.prepare(projectTransport(box));
  current();
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
    start: input.choice.choice.kind === "image" ? "warm" : "cold",
    seedCacheHit: seed.cacheHit,
    event,
    phases: [],
    ...(input.image ? { imageId: input.image.snapshotId } : {}),
    captured: false,
    totalMs: 0,
  };
  const finish = async (sandbox: SandboxHandle) => {
    diagnostics.totalMs = now() - started;
    await input.store.recordDiagnostics(diagnostics);
    return { sandbox, recipe, checkout: synced.checkout, diagnostics };
  };

  const phases = planPhases(recipe, event);
  // Egress opens only for work that needs it (the recipe's commands, the runtime download): a warm start at
  // the same commit never changes the policy before enrollment does.
  if (phases.length > 0) await input.openEgress({});
  const ran = await runPhases(phases, recipe, { box, cwd: synced.checkout, signal });
  current();
  diagnostics.phases = ran.reports.map(({ outputTail: _tail, reason: _reason, ...report }) => report);
  if (ran.failed) {
    const failure = DeclaredPreparationError.of(ran.failed);
    diagnostics.failure = { phase: ran.failed.phase, reason: failure.reason, outputTail: failure.outputTail };
    if (recipe.source !== "detected") {
      await finish(input.sandbox);
      throw failure;
    }
    diagnostics.captureSkipped = "the detected dependency install failed; the worker starts without an image";
    return finish(input.sandbox);
  }
  // Before any secret reaches this box (the runtime's tokens for a capture, then enrollment's). A replay past
  // `pending` is not checked: enrollment may have changed the runtime on this box since, which says nothing
  // about the image.
  if (input.image?.runtime && (await input.store.choiceFor(input.leaseId))?.phase === "pending") {
    const changed = await runtimeChangedOn(box, input.image.runtime, signal);
    if (changed) {
      await input.store.refuse(input.image.snapshotId, changed, now());
      diagnostics.failure = { phase: "runtime check", reason: changed, outputTail: "" };
      await finish(input.sandbox);
      throw new ImageRefusedError(input.image.snapshotId, changed);
    }
    current();
  }
  // The record already says so when nothing changed (a warm start at the same commit and recipe).
  if (event !== "unchanged") {
    await recordPreparation(box, { ...at, identity: recipe.identity }, signal);
    current();
  }

  const skip = await captureSkipReason(input, event, now());
  if (skip) {
    diagnostics.captureSkipped = skip;
    return finish(input.sandbox);
  }
  const runtime = await (input.prepareNodeRuntime as () => Promise<NodeRuntimePreparation>)();
  current();
  await input.openEgress({ runtimeUrl: runtime.nodeBootstrap.url });
  await input.installRuntime(box, runtime, signal);
  current();
  await scrubBox(box, signal);
  current();
  const measured = await measureRuntime(box, signal);
  current();
  const snapshotId = await project.capture(input.sandbox, input.imageExpirationMs, signal);
  await input.store.recordImage({
    snapshotId,
    key: input.choice.key,
    profileKey: input.profileKey,
    projectKey: preparation.key,
    baseCommit: preparation.baseCommit,
    recipeIdentity: recipe.identity,
    recipeSource: recipe.source,
    sourceLeaseId: input.leaseId,
    createdAt: now(),
    lastUsedAt: now(),
    state: "ready",
    runtime: measured,
  });
  diagnostics.captured = true;
  diagnostics.imageId = snapshotId;
  current();
  return finish(await project.restore(input.sandbox, snapshotId, signal));
}

/**
 * A lease's choice leaves `pending` before its enrollment is first attempted: from then on its sandbox may hold
 * what enrollment or the agent put there, so no replay that adopts it ever captures it.
 */
export const ENROLLMENT_MAY_HAVE_RUN =
  "enrollment may have run on this sandbox (the store records its lease past preparation), so it is never the source of an image";

/** Why no image is captured this time, or undefined when one is due. */
async function captureSkipReason(input: PrepareInput, event: "initial" | "refresh" | "unchanged", now: number) {
  if (!input.prepareNodeRuntime) return "the gateway offered no node runtime preparation, so nothing is captured";
  // Only our store decides: the box's own record is the box's to edit, and a replay reads it again.
  const captured = (await input.store.images()).some((image) => image.sourceLeaseId === input.leaseId);
  if (captured) return "this lease already captured its image";
  const recorded = await input.store.choiceFor(input.leaseId);
  if (recorded?.phase !== "pending") return ENROLLMENT_MAY_HAVE_RUN;
  const current = imageCurrentReason(input.image, event, now);
  if (current) return current;
  try {
    await input.store.assertRoomForImage(input.choice.key);
  } catch (error) {
    if (error instanceof ImageStoreFullError) return error.message;
    throw error;
  }
  return undefined;
}

/** Why the runtime on the box is not the one captured with the image; an unreadable measurement is a reason too. */
async function runtimeChangedOn(box: SandboxBox, recorded: RuntimeDigest, signal: AbortSignal) {
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
