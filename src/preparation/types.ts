// The records preparation keeps and reports: warm images, the cold/image choice of each lease, and the
// diagnostics of each preparation. They are plain JSON (the image store writes them to disk as they are).
import type { PhaseName, PreparationEvent, RecipeSource } from "../devcontainer/index.js";
import type { RuntimeIdentity } from "./key.js";

/** One warm image: a Vercel snapshot of a prepared (project) or runtime-only (base), scrubbed sandbox. */
export interface ImageRecord {
  /** The Vercel snapshot id. */
  snapshotId: string;
  /** `base`: the verified runtime and nothing of any project or lease; absent: a project image. */
  kind?: "base";
  /** Image key: a project image's profile and project key, a base image's base key (see key.ts). */
  key: string;
  /** The base key of the runtime it holds (a base image's own key); project images of another are never used. */
  baseKey?: string;
  /** The base image a project image was captured on top of: retention never deletes it while this one exists. */
  baseImage?: string;
  /** The image-relevant profile settings alone, so retention can apply that profile's rules. */
  profileKey: string;
  projectKey: string;
  baseCommit: string;
  recipeIdentity: string;
  recipeSource: RecipeSource;
  /** The lease whose sandbox was captured. */
  sourceLeaseId: string;
  createdAt: number;
  lastUsedAt: number;
  /** `ready` images may serve allocations; `missing` ones were not found on Vercel and only await forgetting. */
  state: "ready" | "missing";
  /**
   * What our programs run from the box: measured on a base image's sandbox right after the runtime install,
   * before any recipe ran; a project image carries its base's (absent on images captured before either was).
   */
  runtime?: RuntimeDigest;
  /**
   * A base image's OpenClaw version (core's `nodeBootstrap.openclawVersion`): `images warm`, which cannot learn
   * the gateway's runtime digest outside a provision, treats a base image of another version as absent.
   */
  openclawVersion?: string;
  /**
   * A base image's runtime identity (digests and names, no URL or token): with the profile key it gives the base
   * key (key.ts), so the key can be checked, or computed for another profile of the same shape.
   */
  runtimeIdentity?: RuntimeIdentity;
  /**
   * When a sandbox restored from it right after its capture, before anything ran there, measured `runtime`
   * unchanged. A snapshot never changes, so a worker started from a verified image skips that check.
   */
  runtimeVerifiedAt?: number;
  /** When a worker started from it found that runtime changed: from then on it serves no allocation. */
  refusedAt?: number;
  refusedReason?: string;
  /** When retention chose to delete it: from then on it serves no allocation (set by the image store). */
  deletingSince?: number;
  /** Failed deletion attempts, retried by later maintenance passes. */
  deleteAttempts?: number;
  lastDeleteError?: string;
}

/** Digests of what our programs execute from a prepared box (runtime-digest.ts measures them). */
export interface RuntimeDigest {
  /** `<resolved path> <sha256>` of the `node` on PATH. */
  node: string;
  /** sha256 over the sorted digests of every file and the targets of every link under the runtimes dir. */
  runtimes: string;
}

/** Recorded before the first Vercel request of a lease; every replay and restart reuses it. */
export interface AllocationChoice {
  leaseId: string;
  key: string;
  profileKey: string;
  choice: { kind: "cold" } | { kind: "image"; snapshotId: string };
  recordedAt: number;
  /**
   * pending: not yet prepared; prepared: preparation (and capture, if any) done, recorded before enrollment is
   * first attempted, so the sandbox is never captured again; enrolled: node enrolled.
   */
  phase: "pending" | "prepared" | "enrolled";
  /** The lease started from an image its worker refused, and fell back to this cold start. */
  fellBack?: true;
}

export interface PhaseReport {
  phase: PhaseName;
  ms: number;
  ok: boolean;
  /** The command (or parallel member) that failed, as a short label. */
  failed?: string;
  exitCode?: number;
}

/** What one preparation did; `openclaw vercel-sandbox images` shows these. */
export interface PreparationDiagnostics {
  leaseId: string;
  at: number;
  key: string;
  projectKey: string;
  baseCommit: string;
  recipe: {
    source: RecipeSource;
    file?: string;
    identity: string;
    ignoredNote?: string;
    notes: string[];
    /** E.g. a value or command containing `${…}`, which stays literal. */
    warnings: string[];
  };
  /** cold: a fresh sandbox; base: created from the base image `baseImageId`; warm: from the project image `imageId`. */
  start: "cold" | "base" | "warm";
  /** The base image this lease started from, or the one it captured before its recipe ran. */
  baseImageId?: string;
  /** Why no base image was captured on a cold start, when none was. */
  baseCaptureSkipped?: string;
  /** Whether core found its pristine seed of this commit on the box already (no Git pack uploaded). */
  seedCacheHit?: boolean;
  event: PreparationEvent;
  phases: PhaseReport[];
  /** Redacted output of the failed phase, at most 16 KiB. */
  failure?: {
    phase: PhaseName | "runtime" | "runtime check" | "scrub" | "capture" | "recipe" | "fallback";
    reason: string;
    outputTail: string;
  };
  /** The image this lease started from, or the one it captured. */
  imageId?: string;
  captured: boolean;
  /** Why no image was captured, when none was. */
  captureSkipped?: string;
  totalMs: number;
}
