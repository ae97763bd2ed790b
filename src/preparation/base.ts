// The base runtime image (issue 21): on a sandbox this provision has just created cold, before core's seed,
// before any recipe and long before enrollment, the gateway's runtime is installed and measured; that
// measurement is the clean baseline every later check of this lease (and of every image built on it) compares
// with. When no base image of the key exists and nobody else is capturing one, the box is scrubbed and
// captured as the base image, then restored. Only such a box is ever a base image's source: nothing but our
// own runtime program has run there. `images warm` (src/cli/warm.ts) has the gateway run the same step on a
// worker without a project that it asked for (provider/steps/base-request.ts), which it then destroys.
import type { NodeRuntimePreparation } from "../infra/index.js";
import type { SandboxBox, SandboxHandle, VercelProject } from "../vercel/index.js";
import { scrubBox } from "./box.js";
import { runtimeIdentityOf } from "./key.js";
import { measureRuntime } from "./runtime-digest.js";
import { type ImageStore, ImageStoreFullError } from "./store.js";
import type { ImageRecord, RuntimeDigest } from "./types.js";

export interface BaseInput {
  leaseId: string;
  project: VercelProject;
  sandbox: SandboxHandle;
  box: SandboxBox;
  store: ImageStore;
  profileKey: string;
  baseKey: string;
  runtime: NodeRuntimePreparation;
  imageExpirationMs: number;
  installRuntime: (box: SandboxBox, runtime: NodeRuntimePreparation, signal: AbortSignal) => Promise<void>;
  openEgress: (on: { sandbox: SandboxHandle; runtimeUrl?: string }) => Promise<void>;
  /** Told of each step with its duration as it ends (progress). */
  progress: (step: string, ms: number) => void;
  signal: AbortSignal;
  current: () => void;
  now: () => number;
}

/** The base step's skip reason when a current base image of the key exists (and a worker's answer to `images warm`). */
export const BASE_EXISTS = "a base image of this key exists";

/** The base step's skip reason while another lease holds the key's capture claim (`images warm` waits for it). */
export const CAPTURING_ELSEWHERE = "another worker is capturing the base image of this key";

export interface BaseOutcome {
  sandbox: SandboxHandle;
  /** The runtime measured before any recipe ran. */
  baseline: RuntimeDigest;
  /** The base image captured from this box, when one was. */
  captured?: ImageRecord;
  /** Why none was captured. */
  skipped?: string;
}

/** Runs `work`, reporting its duration to `progress` when it ends. */
export async function timed<T>(progress: (step: string, ms: number) => void, step: string, work: () => Promise<T>) {
  const started = Date.now();
  const out = await work();
  progress(step, Date.now() - started);
  return out;
}

export async function installBase(input: BaseInput): Promise<BaseOutcome> {
  const { box, signal, store, progress, current } = input;
  await input.openEgress({ sandbox: input.sandbox, runtimeUrl: input.runtime.nodeBootstrap.url });
  await timed(progress, "runtime install", () => input.installRuntime(box, input.runtime, signal));
  current();
  const baseline = await timed(progress, "runtime measurement", () => measureRuntime(box, signal));
  current();
  const skip = (skipped: string): BaseOutcome => ({ sandbox: input.sandbox, baseline, skipped });
  if (await store.usable(input.baseKey)) return skip(BASE_EXISTS);
  if (!(await store.claimCapture(input.baseKey, input.leaseId, input.now()))) {
    return skip(CAPTURING_ELSEWHERE);
  }
  try {
    // Checked again under the claim: a capture that just finished elsewhere needs no second one.
    if (await store.usable(input.baseKey)) return skip(BASE_EXISTS);
    try {
      await store.assertRoomForImage(input.baseKey);
    } catch (error) {
      if (error instanceof ImageStoreFullError) return skip(error.message);
      throw error;
    }
    await timed(progress, "base scrub", () => scrubBox(box, signal));
    current();
    const snapshotId = await timed(progress, "base capture", () =>
      input.project.capture(input.sandbox, input.imageExpirationMs, signal),
    );
    const record: ImageRecord = {
      snapshotId,
      kind: "base",
      key: input.baseKey,
      baseKey: input.baseKey,
      profileKey: input.profileKey,
      projectKey: "",
      baseCommit: "",
      recipeIdentity: "",
      recipeSource: "none",
      sourceLeaseId: input.leaseId,
      createdAt: input.now(),
      lastUsedAt: input.now(),
      state: "ready",
      runtime: baseline,
      openclawVersion: input.runtime.nodeBootstrap.openclawVersion,
      runtimeIdentity: runtimeIdentityOf(input.runtime),
    };
    await store.recordImage(record);
    current();
    const sandbox = await timed(progress, "base restore", () =>
      input.project.restore(input.sandbox, snapshotId, signal),
    );
    return { sandbox, baseline, captured: record };
  } finally {
    await store.finishCapture(input.baseKey, input.leaseId);
  }
}
