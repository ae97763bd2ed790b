// Warm-image retention: one bounded maintenance pass over the image store (run by `maintain` and the
// `openclaw vercel-sandbox gc` command). The decision is pure (planRetention); the pass only carries it out.
//
// Per image key of a configured profile, the newest `keep` ready images stay unless unused for
// `unusedForMs`; every other image is deleted, except one an outstanding lease uses. A deletion is claimed
// in the store first (from then on the image serves no allocation), requested from Vercel, then proven by a
// lookup before the record is forgotten; a failure is recorded and retried by a later pass. Images of
// profiles that are not configured are left alone: their rules are unknown.

import { messageOf } from "../infra/index.js";
import type { VercelProject } from "../vercel/index.js";
import type { ImageStore } from "./store.js";
import { newestFirst } from "./store-state.js";
import type { ImageRecord } from "./types.js";

export interface RetentionRules {
  profileKey: string;
  /** Ready images kept per image key. */
  keep: number;
  /** An image unused (lastUsedAt) this long is deleted; 0 keeps images however long they are unused. */
  unusedForMs: number;
}

export interface RetentionProfile extends RetentionRules {
  project: VercelProject;
}

const DEFAULT_DELETIONS_PER_PASS = 16;

export type RetentionReason = "beyond-keep" | "unused" | "retry";

export interface ImageRef {
  snapshotId: string;
  key: string;
  profileKey: string;
}

export interface RetentionReport {
  deleted: Array<ImageRef & { reason: RetentionReason }>;
  kept: ImageRef[];
  /** Deletions that failed or could not be proven; retried by a later pass. */
  failed: Array<ImageRef & { attempts: number; error: string }>;
  /** Due for deletion, but an outstanding lease uses it. */
  inUse: ImageRef[];
  /** Due for deletion, past this pass's budget. */
  deferred: ImageRef[];
  /** Of a profile that is not configured, so left alone. */
  unconfigured: ImageRef[];
  /** Vercel had said they do not exist: forgotten without a request. */
  forgottenMissing: ImageRef[];
  /** Set when the pass stopped early because its signal was aborted. */
  stopped?: "aborted";
}

export interface RetentionPlan {
  kept: ImageRecord[];
  /** Least attempted first, then least recently used, so a deletion that keeps failing starves no other. */
  doomed: Array<{ image: ImageRecord; reason: RetentionReason }>;
  inUse: ImageRecord[];
  unconfigured: ImageRecord[];
  missing: ImageRecord[];
}

/** Two profiles with one profileKey share images: the more generous rules win. */
function rulesByProfile(profiles: RetentionRules[]): Map<string, RetentionRules> {
  const rules = new Map<string, RetentionRules>();
  for (const profile of profiles) {
    const known = rules.get(profile.profileKey);
    if (!known) {
      rules.set(profile.profileKey, { ...profile });
      continue;
    }
    known.keep = Math.max(known.keep, profile.keep);
    known.unusedForMs =
      known.unusedForMs === 0 || profile.unusedForMs === 0 ? 0 : Math.max(known.unusedForMs, profile.unusedForMs);
  }
  return rules;
}

export function planRetention(
  images: ImageRecord[],
  pinned: ReadonlySet<string>,
  profiles: RetentionRules[],
  now: number,
): RetentionPlan {
  const rules = rulesByProfile(profiles);
  const plan: RetentionPlan = { kept: [], doomed: [], inUse: [], unconfigured: [], missing: [] };
  const doom = (image: ImageRecord, reason: RetentionReason) => {
    if (pinned.has(image.snapshotId)) plan.inUse.push(image);
    else plan.doomed.push({ image, reason });
  };
  const byKey = new Map<string, ImageRecord[]>();
  for (const image of images) {
    if (image.state === "missing") plan.missing.push(image);
    else if (!rules.has(image.profileKey)) plan.unconfigured.push(image);
    else if (image.deletingSince !== undefined) doom(image, "retry");
    else byKey.set(image.key, [...(byKey.get(image.key) ?? []), image]);
  }
  for (const group of byKey.values()) {
    group.sort(newestFirst);
    group.forEach((image, index) => {
      const { keep, unusedForMs } = rules.get(image.profileKey)!;
      if (index >= keep) doom(image, "beyond-keep");
      else if (unusedForMs > 0 && now - image.lastUsedAt >= unusedForMs) doom(image, "unused");
      else plan.kept.push(image);
    });
  }
  plan.doomed.sort(
    (a, b) => (a.image.deleteAttempts ?? 0) - (b.image.deleteAttempts ?? 0) || a.image.lastUsedAt - b.image.lastUsedAt,
  );
  return plan;
}

const ref = ({ snapshotId, key, profileKey }: ImageRecord): ImageRef => ({ snapshotId, key, profileKey });

type Outcome = { gone: true } | { gone: false; error: string } | "aborted";

/** Deletes, then looks the snapshot up: only "not there" proves the deletion. */
async function deleteWithProof(project: VercelProject, snapshotId: string, signal: AbortSignal): Promise<Outcome> {
  try {
    await project.deleteSnapshot(snapshotId, signal);
  } catch (error) {
    return signal.aborted ? "aborted" : { gone: false, error: `the deletion failed: ${messageOf(error)}` };
  }
  try {
    const still = await project.findSnapshot(snapshotId, signal);
    if (!still) return { gone: true };
    return { gone: false, error: `Vercel still has it (status ${still.status}) after the deletion` };
  } catch (error) {
    return signal.aborted
      ? "aborted"
      : { gone: false, error: `the deletion could not be verified: ${messageOf(error)}` };
  }
}

export interface MaintainImagesInput {
  store: ImageStore;
  profiles: RetentionProfile[];
  now: number;
  signal: AbortSignal;
  /** Throws once this pass is no longer current; called before each external effect and each write. */
  assertCurrent: () => void;
  /** Deletion attempts this pass may make. */
  budget?: number;
  logger?: { warn(message: string): void };
}

export async function maintainImages(input: MaintainImagesInput): Promise<RetentionReport> {
  const { store, profiles, now, signal, assertCurrent, logger } = input;
  const budget = input.budget ?? DEFAULT_DELETIONS_PER_PASS;
  const report: RetentionReport = {
    deleted: [],
    kept: [],
    failed: [],
    inUse: [],
    deferred: [],
    unconfigured: [],
    forgottenMissing: [],
  };
  const stop = () => Object.assign(report, { stopped: "aborted" as const });
  if (signal.aborted) return stop();
  const plan = planRetention(await store.images(), await store.pinnedSnapshotIds(), profiles, now);
  report.kept = plan.kept.map(ref);
  report.inUse = plan.inUse.map(ref);
  report.unconfigured = plan.unconfigured.map(ref);

  for (const image of plan.missing) {
    if (signal.aborted) return stop();
    assertCurrent();
    await store.forget(image.snapshotId, now);
    report.forgottenMissing.push(ref(image));
  }

  const projects = new Map(profiles.map((p) => [p.profileKey, p.project]));
  let attempts = 0;
  for (const { image, reason } of plan.doomed) {
    if (signal.aborted) return stop();
    if (attempts >= budget) {
      report.deferred.push(ref(image));
      continue;
    }
    assertCurrent();
    const claim = await store.beginDeletion(image.snapshotId, now);
    if (claim === "pinned") report.inUse.push(ref(image));
    if (claim !== "started") continue;
    attempts += 1;
    assertCurrent();
    const outcome = await deleteWithProof(projects.get(image.profileKey)!, image.snapshotId, signal);
    if (outcome === "aborted") return stop();
    assertCurrent();
    if (outcome.gone) {
      await store.forget(image.snapshotId, now);
      report.deleted.push({ ...ref(image), reason });
      continue;
    }
    await store.deletionFailed(image.snapshotId, outcome.error);
    const tries = (image.deleteAttempts ?? 0) + 1;
    report.failed.push({ ...ref(image), attempts: tries, error: outcome.error });
    logger?.warn(
      `vercel-sandbox could not delete warm image ${image.snapshotId} (attempt ${tries}): ${outcome.error}; ` +
        "a later maintenance pass retries it",
    );
  }
  return report;
}
