// The warm-image store's records as pure data: the file format, the merge of two instances' views, and the
// bounds. store.ts does the I/O. Merge rules, per record:
// - images by snapshotId: lastUsedAt the later; `missing`, a started deletion, the first refusal (with its
//   reason) and the higher deleteAttempts (with its error) win, since none of them is ever undone;
// - a forgotten snapshotId (deletion proven, or Vercel said missing) stays in `forgotten`, and a released
//   lease in `released`, so a stale copy held by another instance never resurrects the image or the pin;
// - choices by leaseId: the first recorded wins (a lease's choice never changes), the furthest phase;
// - diagnostics by lease and time, the newest 50;
// - base-image capture claims by base key: the later claim wins, a finished one over an open one of its time.
import { DamagedFileError, type DurableFormat } from "../infra/index.js";
import type { AllocationChoice, ImageRecord, PreparationDiagnostics } from "./types.js";

export const STORE_BOUNDS = { keys: 128, images: 512, choices: 1024, diagnostics: 50 } as const;
/** Tombstones are small; past these the oldest go (a stale copy that old is not expected to come back). */
export const TOMBSTONE_BOUNDS = { forgotten: 2048, released: 4096 } as const;
export const PHASES: ReadonlyArray<AllocationChoice["phase"]> = ["pending", "prepared", "enrolled"];

export interface StoreState {
  images: Record<string, ImageRecord>;
  forgotten: Record<string, number>;
  choices: Record<string, AllocationChoice>;
  released: Record<string, number>;
  diagnostics: PreparationDiagnostics[];
  /** Who captures a base image of a key now: at most one capture per key at a time, across instances. */
  captures: Record<string, CaptureClaim>;
}

export interface CaptureClaim {
  owner: string;
  at: number;
  done?: boolean;
}

/** A claim older than this is taken to be abandoned (a crashed gateway); a capture takes a few minutes. */
export const CAPTURE_CLAIM_TTL_MS = 30 * 60_000;

export const emptyState = (): StoreState => ({
  images: {},
  forgotten: {},
  choices: {},
  released: {},
  diagnostics: [],
  captures: {},
});

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);

function isImage(v: unknown): v is ImageRecord {
  return (
    isObject(v) &&
    typeof v.snapshotId === "string" &&
    typeof v.key === "string" &&
    typeof v.profileKey === "string" &&
    typeof v.createdAt === "number" &&
    typeof v.lastUsedAt === "number" &&
    (v.state === "ready" || v.state === "missing")
  );
}

function isChoice(v: unknown): v is AllocationChoice {
  const made = isObject(v) ? v.choice : undefined;
  return (
    isObject(v) &&
    typeof v.leaseId === "string" &&
    typeof v.key === "string" &&
    typeof v.recordedAt === "number" &&
    PHASES.includes(v.phase as AllocationChoice["phase"]) &&
    isObject(made) &&
    (made.kind === "cold" || (made.kind === "image" && typeof made.snapshotId === "string"))
  );
}

const isDiagnostics = (v: unknown): v is PreparationDiagnostics =>
  isObject(v) && typeof v.leaseId === "string" && typeof v.at === "number";

/** The well-formed records of a map, each under its own id. */
function records<T>(v: unknown, valid: (x: unknown) => x is T, idOf: (x: T) => string): Record<string, T> {
  const out: Record<string, T> = {};
  for (const [id, record] of Object.entries(isObject(v) ? v : {}))
    if (valid(record) && idOf(record) === id) out[id] = record;
  return out;
}

function claims(v: unknown): Record<string, CaptureClaim> {
  const out: Record<string, CaptureClaim> = {};
  for (const [key, c] of Object.entries(isObject(v) ? v : {})) {
    if (isObject(c) && typeof c.owner === "string" && typeof c.at === "number") {
      out[key] = { owner: c.owner, at: c.at, ...(c.done === true ? { done: true } : {}) };
    }
  }
  return out;
}

function times(v: unknown): Record<string, number> {
  return Object.fromEntries(Object.entries(isObject(v) ? v : {}).filter(([, at]) => typeof at === "number")) as Record<
    string,
    number
  >;
}

function parseStore(text: string): StoreState {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw new DamagedFileError("it is not valid JSON");
  }
  if (!isObject(parsed) || parsed.version !== 1 || !isObject(parsed.images) || !isObject(parsed.choices)) {
    throw new DamagedFileError("it is not a version 1 image store");
  }
  return {
    images: records(parsed.images, isImage, (i) => i.snapshotId),
    forgotten: times(parsed.forgotten),
    choices: records(parsed.choices, isChoice, (c) => c.leaseId),
    released: times(parsed.released),
    diagnostics: Array.isArray(parsed.diagnostics) ? parsed.diagnostics.filter(isDiagnostics) : [],
    captures: claims(parsed.captures),
  };
}

export const STORE_FORMAT: DurableFormat<StoreState> = {
  label: "image store",
  contents: "records",
  empty: emptyState,
  parse: parseStore,
};

export function mergeImage(ours: ImageRecord, theirs: ImageRecord): void {
  ours.lastUsedAt = Math.max(ours.lastUsedAt, theirs.lastUsedAt);
  if (theirs.state === "missing") ours.state = "missing";
  if (theirs.refusedAt !== undefined && (ours.refusedAt === undefined || theirs.refusedAt < ours.refusedAt)) {
    ours.refusedAt = theirs.refusedAt;
    ours.refusedReason = theirs.refusedReason;
  }
  if (theirs.runtimeVerifiedAt !== undefined && ours.runtimeVerifiedAt === undefined) {
    ours.runtimeVerifiedAt = theirs.runtimeVerifiedAt;
  }
  if (theirs.deletingSince !== undefined) {
    ours.deletingSince = Math.min(ours.deletingSince ?? theirs.deletingSince, theirs.deletingSince);
  }
  if ((theirs.deleteAttempts ?? 0) > (ours.deleteAttempts ?? 0)) {
    ours.deleteAttempts = theirs.deleteAttempts;
    ours.lastDeleteError = theirs.lastDeleteError;
  }
}

function mergeChoice(ours: AllocationChoice, theirs: AllocationChoice): void {
  // A fallback from a refused image is the one later change a choice takes: it wins over copies from before it.
  if (theirs.fellBack !== ours.fellBack) {
    if (theirs.fellBack) Object.assign(ours, structuredClone(theirs));
    return;
  }
  const phase = PHASES[Math.max(PHASES.indexOf(ours.phase), PHASES.indexOf(theirs.phase))]!;
  if (theirs.recordedAt < ours.recordedAt) Object.assign(ours, structuredClone(theirs));
  ours.phase = phase;
}

export function newestDiagnostics(entries: PreparationDiagnostics[]): PreparationDiagnostics[] {
  const byRun = new Map(entries.map((d) => [`${d.leaseId}@${d.at}`, d]));
  return [...byRun.values()].sort((a, b) => b.at - a.at).slice(0, STORE_BOUNDS.diagnostics);
}

/** Folds `from` (what another instance wrote) into `into`. */
export function mergeState(into: StoreState, from: StoreState): void {
  for (const [id, at] of Object.entries(from.forgotten)) into.forgotten[id] ??= at;
  for (const [id, at] of Object.entries(from.released)) into.released[id] ??= at;
  for (const [id, theirs] of Object.entries(from.images)) {
    const ours = into.images[id];
    if (ours) mergeImage(ours, theirs);
    else into.images[id] = structuredClone(theirs);
  }
  for (const [leaseId, theirs] of Object.entries(from.choices)) {
    const ours = into.choices[leaseId];
    if (ours) mergeChoice(ours, theirs);
    else into.choices[leaseId] = structuredClone(theirs);
  }
  for (const id of Object.keys(into.forgotten)) delete into.images[id];
  for (const leaseId of Object.keys(into.released)) delete into.choices[leaseId];
  into.diagnostics = newestDiagnostics([...into.diagnostics, ...structuredClone(from.diagnostics)]);
  for (const [key, theirs] of Object.entries(from.captures)) {
    const ours = into.captures[key];
    if (!ours || theirs.at > ours.at || (theirs.at === ours.at && theirs.owner === ours.owner && theirs.done)) {
      into.captures[key] = { ...theirs };
    }
  }
}

export function trimOldest(tombstones: Record<string, number>, bound: number): void {
  const entries = Object.entries(tombstones);
  if (entries.length <= bound) return;
  entries.sort(([, a], [, b]) => a - b);
  for (const [id] of entries.slice(0, entries.length - bound)) delete tombstones[id];
}

/**
 * Images an outstanding lease needs: the one it was allocated from, and the ones captured from its sandbox
 * (a persistent sandbox's next session restores its latest snapshot, so deleting that would strand it); and
 * base images a recorded project image was captured on top of (Vercel snapshots are layered on their source).
 */
export function pinnedBy(state: StoreState): Set<string> {
  const pinned = new Set<string>();
  for (const { choice } of Object.values(state.choices)) if (choice.kind === "image") pinned.add(choice.snapshotId);
  for (const image of Object.values(state.images)) {
    if (state.choices[image.sourceLeaseId]) pinned.add(image.snapshotId);
    if (image.baseImage && image.state === "ready") pinned.add(image.baseImage);
  }
  return pinned;
}

/** Whether `owner` may capture the base image of `key` now: nobody else holds a live, unfinished claim. */
export function mayClaim(state: StoreState, key: string, owner: string, now: number): boolean {
  const claim = state.captures[key];
  return !claim || claim.done === true || claim.owner === owner || now - claim.at >= CAPTURE_CLAIM_TTL_MS;
}

export const newestFirst = (a: ImageRecord, b: ImageRecord) => b.createdAt - a.createdAt;
export const sameChoice = (a: AllocationChoice, b: AllocationChoice) =>
  a.key === b.key && a.profileKey === b.profileKey && JSON.stringify(a.choice) === JSON.stringify(b.choice);

/** A bound of the store is reached; new warm images or allocations are refused until it is cleaned up. */
export class ImageStoreFullError extends Error {
  override readonly name = "ImageStoreFullError";
  constructor(
    readonly bound: keyof typeof STORE_BOUNDS,
    message: string,
  ) {
    super(message);
  }
}

/** Throws ImageStoreFullError when an image of `key` would pass a bound (`where` names the file). */
export function assertRoomForImage(state: StoreState, key: string, where: string): void {
  const images = Object.values(state.images);
  const keys = new Set(images.map((i) => i.key));
  const cleanup =
    "lower `images.keep` or `images.unusedFor` in the profile and run `openclaw vercel-sandbox gc`, destroy " +
    "workers whose leases still use old images, and delete images of profiles no longer configured " +
    "(`openclaw vercel-sandbox images` lists them)";
  if (images.length >= STORE_BOUNDS.images) {
    throw new ImageStoreFullError(
      "images",
      `the warm-image store ${where} holds ${images.length} images, its limit; no new warm image is ` +
        `recorded until some are deleted: ${cleanup}`,
    );
  }
  if (!keys.has(key) && keys.size >= STORE_BOUNDS.keys) {
    throw new ImageStoreFullError(
      "keys",
      `the warm-image store ${where} holds images of ${keys.size} image keys, its limit; no image of a ` +
        `new key is recorded until the images of some key are all deleted: ${cleanup}`,
    );
  }
}
