// The image record the store and retention specs start from; each spec overrides the fields it is about.
import type { ImageRecord } from "../../src/preparation/types.js";

export function imageRecord(snapshotId: string, over: Partial<ImageRecord> = {}): ImageRecord {
  return {
    snapshotId,
    key: "key-a",
    profileKey: "profile-a",
    projectKey: "project-a",
    baseCommit: "0123abc",
    recipeIdentity: "recipe-1",
    recipeSource: "devcontainer",
    sourceLeaseId: "vsb_source",
    createdAt: 100,
    lastUsedAt: 100,
    state: "ready",
    ...over,
  };
}
