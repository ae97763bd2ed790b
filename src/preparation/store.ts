// The warm-image store: the images (Vercel snapshots of prepared, scrubbed sandboxes) of each image key, the
// cold/image choice of each outstanding lease (which pins its image against retention), and the latest
// preparation diagnostics. External plugins get no host state store, so it is our own DurableFile at
// `<stateDir>/vercel-sandbox/images.json` (in memory without a state dir).
//
// Every change is applied under the file's queue to memory merged with what is on disk (store-state.ts has
// the merge rules), so instances on one file keep each other's records. Images and choices are never
// evicted: at a bound new ones are refused with cleanup guidance.
import { join } from "node:path";
import { DurableFile, type DurableFileOptions } from "../infra/index.js";
import {
  assertRoomForImage,
  CAPTURE_CLAIM_TTL_MS,
  emptyState,
  ImageStoreFullError,
  mayClaim,
  mergeImage,
  mergeState,
  newestDiagnostics,
  newestFirst,
  PHASES,
  pinnedBy,
  STORE_BOUNDS,
  STORE_FORMAT,
  type StoreState,
  sameChoice,
  TOMBSTONE_BOUNDS,
  trimOldest,
} from "./store-state.js";
import type { AllocationChoice, ImageRecord, PreparationDiagnostics } from "./types.js";

export { ImageStoreFullError, STORE_BOUNDS } from "./store-state.js";

/** Only a ready image that retention has not begun to delete, and no worker refused, may serve an allocation. */
const servesAllocations = (image: ImageRecord) =>
  image.state === "ready" && image.deletingSince === undefined && image.refusedAt === undefined;

/** A lease's allocation choice is fixed once recorded, and a destroyed lease gets none. */
export class ChoiceConflictError extends Error {
  override readonly name = "ChoiceConflictError";
}

/** An image choice names an image that can no longer serve allocations (allocate cold instead). */
export class ImageUnusableError extends Error {
  override readonly name = "ImageUnusableError";
}

export class ImageStore {
  private state = emptyState();
  private loaded: Promise<void> | undefined;
  private readonly durable: DurableFile<StoreState> | undefined;

  /** Without a file the store lives in memory (tests, or a host that gives the plugin no state dir). */
  constructor(file?: string, options: DurableFileOptions = {}) {
    this.durable = file ? new DurableFile(file, STORE_FORMAT, options) : undefined;
  }

  static inDirectory(stateDir: string | undefined, options: DurableFileOptions = {}): ImageStore {
    return new ImageStore(stateDir ? join(stateDir, "vercel-sandbox", "images.json") : undefined, options);
  }

  private load(): Promise<void> {
    this.loaded ??= this.readIfChanged();
    return this.loaded;
  }

  private async readIfChanged(): Promise<void> {
    const onDisk = await this.durable?.readIfChanged();
    if (onDisk) mergeState(this.state, onDisk);
  }

  /** Memory, after reading the file again if another instance (a gateway, a CLI) changed it since. */
  private async current(): Promise<StoreState> {
    await this.load();
    await this.readIfChanged();
    return this.state;
  }

  /** Applies one change to memory merged with disk, under the file's queue, then writes the result. */
  private async change<R>(apply: (state: StoreState) => R): Promise<R> {
    await this.load();
    const applyAndTrim = (state: StoreState): R => {
      const result = apply(state);
      trimOldest(state.forgotten, TOMBSTONE_BOUNDS.forgotten);
      trimOldest(state.released, TOMBSTONE_BOUNDS.released);
      return result;
    };
    if (!this.durable) return applyAndTrim(this.state);
    let result: R | undefined;
    await this.durable.update((onDisk) => {
      mergeState(this.state, onDisk);
      result = applyAndTrim(this.state);
      return `${JSON.stringify({ version: 1, ...this.state })}\n`;
    });
    return result as R;
  }

  private where(): string {
    return this.durable ? this.durable.path : "(in memory)";
  }

  async images(): Promise<ImageRecord[]> {
    return structuredClone(Object.values((await this.current()).images).sort(newestFirst));
  }

  /** Whether a base image of this profile shape (any runtime) may serve a new allocation. */
  async hasUsableBase(profileKey: string): Promise<boolean> {
    return Object.values((await this.current()).images).some(
      (i) => i.kind === "base" && i.profileKey === profileKey && servesAllocations(i),
    );
  }

  /**
   * The newest image of `key` that may serve a new allocation; at `baseCommit` only, and holding the runtime
   * of `baseKey` only, when those are given.
   */
  async usable(key: string, only: { baseCommit?: string; baseKey?: string } = {}): Promise<ImageRecord | undefined> {
    const ready = Object.values((await this.current()).images).filter(
      (i) =>
        i.key === key &&
        servesAllocations(i) &&
        (only.baseCommit === undefined || i.baseCommit === only.baseCommit) &&
        (only.baseKey === undefined || i.baseKey === only.baseKey),
    );
    return structuredClone(ready.sort(newestFirst)[0]);
  }

  /**
   * Claims the capture of the base image of `key` for `owner`: false while another owner's claim is live (at
   * most one capture per key at a time, across gateways and CLIs on this file). Finish it with finishCapture.
   */
  async claimCapture(key: string, owner: string, at: number): Promise<boolean> {
    return this.change((state) => {
      if (!mayClaim(state, key, owner, at)) return false;
      state.captures[key] = { owner, at };
      for (const [other, claim] of Object.entries(state.captures)) {
        if (claim.done && at - claim.at >= CAPTURE_CLAIM_TTL_MS) delete state.captures[other];
      }
      return true;
    });
  }

  async finishCapture(key: string, owner: string): Promise<void> {
    await this.change((state) => {
      const claim = state.captures[key];
      if (claim?.owner === owner) claim.done = true;
    });
  }

  /** Throws ImageStoreFullError when an image of `key` could not be recorded; check before capturing one. */
  async assertRoomForImage(key: string): Promise<void> {
    assertRoomForImage(await this.current(), key, this.where());
  }

  /** Records a new capture (the key's previous images stay usable); a replay of a known one changes nothing. */
  async recordImage(record: ImageRecord): Promise<void> {
    await this.change((state) => {
      if (state.forgotten[record.snapshotId] !== undefined) return;
      const known = state.images[record.snapshotId];
      if (known) return mergeImage(known, record);
      assertRoomForImage(state, record.key, this.where());
      state.images[record.snapshotId] = structuredClone(record);
    });
  }

  async touch(snapshotId: string, at: number): Promise<void> {
    await this.change((state) => {
      const image = state.images[snapshotId];
      if (image) image.lastUsedAt = Math.max(image.lastUsedAt, at);
    });
  }

  async markMissing(snapshotId: string): Promise<void> {
    await this.change((state) => {
      const image = state.images[snapshotId];
      if (image) image.state = "missing";
    });
  }

  /** A restore of the image right after its capture found its runtime unchanged: later workers skip the check. */
  async markVerified(snapshotId: string, at: number): Promise<void> {
    await this.change((state) => {
      const image = state.images[snapshotId];
      if (image && image.runtimeVerifiedAt === undefined) image.runtimeVerifiedAt = at;
    });
  }

  /** A worker started from the image found what our programs run changed: it never serves an allocation again. */
  async refuse(snapshotId: string, reason: string, at: number): Promise<void> {
    await this.change((state) => {
      const image = state.images[snapshotId];
      if (!image || image.refusedAt !== undefined) return;
      image.refusedAt = at;
      image.refusedReason = reason;
    });
  }

  async choiceFor(leaseId: string): Promise<AllocationChoice | undefined> {
    return structuredClone((await this.current()).choices[leaseId]);
  }

  /**
   * A lease started from an image a worker then refused falls back to a cold start: the one change a recorded
   * choice may take. Returns the new choice; anything else is refused.
   */
  async fallBackCold(leaseId: string, at: number): Promise<AllocationChoice> {
    return this.change((state) => {
      const recorded = state.choices[leaseId];
      if (recorded?.fellBack) return structuredClone(recorded);
      const made = recorded?.choice;
      const image = made?.kind === "image" ? state.images[made.snapshotId] : undefined;
      if (!recorded || image?.refusedAt === undefined) {
        throw new ChoiceConflictError(`lease ${leaseId} falls back to a cold start only from a refused image`);
      }
      recorded.choice = { kind: "cold" };
      recorded.recordedAt = at;
      recorded.phase = "pending";
      recorded.fellBack = true;
      return structuredClone(recorded);
    });
  }

  /** Records a lease's choice once; the same choice again is a replay, a different one is refused. */
  async recordChoice(choice: AllocationChoice): Promise<void> {
    await this.change((state) => {
      const { leaseId } = choice;
      if (state.released[leaseId] !== undefined) {
        throw new ChoiceConflictError(`lease ${leaseId} was destroyed; it gets no new allocation choice`);
      }
      const recorded = state.choices[leaseId];
      if (recorded) {
        if (sameChoice(recorded, choice)) return;
        throw new ChoiceConflictError(
          `lease ${leaseId} already chose ${JSON.stringify(recorded.choice)} for key ${recorded.key}; a lease's ` +
            "allocation choice never changes (a replay must reuse it)",
        );
      }
      if (choice.choice.kind === "image") {
        const image = state.images[choice.choice.snapshotId];
        if (!image || !servesAllocations(image)) {
          throw new ImageUnusableError(
            `warm image ${choice.choice.snapshotId} can no longer serve allocations (it is being deleted or ` +
              "is missing); allocate this lease cold",
          );
        }
      }
      const outstanding = Object.keys(state.choices).length;
      if (outstanding >= STORE_BOUNDS.choices) {
        throw new ImageStoreFullError(
          "choices",
          `the warm-image store ${this.where()} tracks ${outstanding} outstanding leases, its limit; destroy ` +
            "workers that are no longer needed so their allocation choices are released",
        );
      }
      state.choices[leaseId] = structuredClone(choice);
    });
  }

  /** Moves a lease's choice to a later phase (never back); a released lease is left alone. */
  async advanceChoice(leaseId: string, phase: AllocationChoice["phase"]): Promise<void> {
    await this.change((state) => {
      if (state.released[leaseId] !== undefined) return;
      const recorded = state.choices[leaseId];
      if (!recorded) {
        throw new ChoiceConflictError(`lease ${leaseId} has no allocation choice; record one before advancing it`);
      }
      if (PHASES.indexOf(phase) > PHASES.indexOf(recorded.phase)) recorded.phase = phase;
    });
  }

  /** The lease was destroyed: its image is no longer pinned, and the lease never gets a choice again. */
  async releaseChoice(leaseId: string, at = Date.now()): Promise<void> {
    await this.change((state) => {
      delete state.choices[leaseId];
      state.released[leaseId] ??= at;
    });
  }

  async recordDiagnostics(entry: PreparationDiagnostics): Promise<void> {
    await this.change((state) => {
      state.diagnostics = newestDiagnostics([structuredClone(entry), ...state.diagnostics]);
    });
  }

  async diagnostics(): Promise<PreparationDiagnostics[]> {
    return structuredClone((await this.current()).diagnostics);
  }

  /** Every snapshot an image record or a lease still refers to: sandbox release must not delete these. */
  async retainedSnapshotIds(): Promise<Set<string>> {
    const state = await this.current();
    return new Set([...Object.keys(state.images), ...pinnedBy(state)]);
  }

  /** Snapshots that outstanding leases use: retention never deletes these. */
  async pinnedSnapshotIds(): Promise<Set<string>> {
    return pinnedBy(await this.current());
  }

  /**
   * Retention's claim before it deletes an image: refused ("pinned") when a lease uses it now; otherwise the
   * image serves no allocation from here on. "gone" when it is no longer recorded.
   */
  async beginDeletion(snapshotId: string, at: number): Promise<"started" | "pinned" | "gone"> {
    return this.change((state) => {
      const image = state.images[snapshotId];
      if (!image) return "gone";
      if (pinnedBy(state).has(snapshotId)) return "pinned";
      image.deletingSince ??= at;
      return "started";
    });
  }

  async deletionFailed(snapshotId: string, error: string): Promise<void> {
    await this.change((state) => {
      const image = state.images[snapshotId];
      if (!image) return;
      image.deleteAttempts = (image.deleteAttempts ?? 0) + 1;
      image.lastDeleteError = error;
    });
  }

  /** The snapshot is proven gone (or Vercel said it is missing): drop the record for good. */
  async forget(snapshotId: string, at: number): Promise<void> {
    await this.change((state) => {
      delete state.images[snapshotId];
      state.forgotten[snapshotId] ??= at;
    });
  }
}
