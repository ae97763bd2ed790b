// Warm-image retention against the emulator through the unmodified SDK: the images are real snapshots of one
// emulated sandbox (captured through VercelProject), so every deletion and every proof is a real request.
// Where a deletion must fail, the fetch handed to the SDK is wrapped (the SDK's documented seam).
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type LocalSandboxApi, startLocalSandboxApi } from "../../src/emulator/index.js";
import { maintainImages, planRetention, type RetentionProfile } from "../../src/preparation/retention.js";
import { ImageStore } from "../../src/preparation/store.js";
import type { ImageRecord } from "../../src/preparation/types.js";
import { parseSettings } from "../../src/settings/profile.js";
import { type SandboxHandle, VercelClient, type VercelProject } from "../../src/vercel/client.js";
import { imageRecord } from "./records.js";

const HOUR = 3_600_000;
const DAY = 24 * HOUR;
const NOW = 1_000 * DAY;

let api: LocalSandboxApi;
let project: VercelProject;
let sources = 0;

beforeAll(async () => {
  api = await startLocalSandboxApi();
  project = await projectWith(api.fetch);
});
afterAll(async () => {
  await api?.close();
});

function projectWith(fetch: typeof globalThis.fetch): Promise<VercelProject> {
  return new VercelClient({ fetch, credentials: api.credentials }).project(parseSettings({}));
}

const isSnapshotDelete = (input: string | URL | Request, init?: RequestInit) =>
  (init?.method ?? "GET").toUpperCase() === "DELETE" && /\/v2\/sandboxes\/snapshots\//.test(String(input));

/** A sandbox standing in for a lease's; it restores its latest snapshot when it resumes. */
function sourceSandbox(): Promise<SandboxHandle> {
  sources += 1;
  return project.create({ name: `retention-source-${sources}`, runtime: "node24" });
}

/**
 * Records a real snapshot as an image. Its source sandbox is deleted (its snapshots kept), as when the lease
 * that was captured has been destroyed, unless the test passes the sandbox of a lease still outstanding.
 */
async function captured(
  store: ImageStore,
  over: Partial<ImageRecord> = {},
  source?: SandboxHandle,
): Promise<ImageRecord> {
  const sandbox = source ?? (await sourceSandbox());
  const snapshotId = await project.capture(sandbox, 0);
  if (!source) await project.delete(sandbox, false);
  const record = imageRecord(snapshotId, { createdAt: NOW - HOUR, lastUsedAt: NOW - HOUR, ...over });
  await store.recordImage(record);
  return record;
}

const rules = (over: Partial<RetentionProfile> = {}): RetentionProfile => ({
  profileKey: "profile-a",
  keep: 2,
  unusedForMs: DAY,
  project,
  ...over,
});

function pass(store: ImageStore, profiles: RetentionProfile[], extra: { budget?: number; signal?: AbortSignal } = {}) {
  const warnings: string[] = [];
  const report = maintainImages({
    store,
    profiles,
    now: NOW,
    signal: extra.signal ?? new AbortController().signal,
    assertCurrent: () => undefined,
    budget: extra.budget,
    logger: { warn: (m) => warnings.push(m) },
  });
  return { report, warnings };
}

const onVercel = async (snapshotId: string) => (await project.findSnapshot(snapshotId)) !== undefined;
const recorded = async (store: ImageStore) => (await store.images()).map((i) => i.snapshotId).sort();
const snapshotRequests = (snapshotId: string) =>
  api
    .requests()
    .filter((r) => r.path.endsWith(`/snapshots/${snapshotId}`))
    .map((r) => r.method);

describe("image retention", () => {
  it("keeps the newest `keep` images of each key and deletes older ones, forgetting them once proven gone", async () => {
    const store = new ImageStore();
    const oldest = await captured(store, { createdAt: NOW - 3 * HOUR });
    const middle = await captured(store, { createdAt: NOW - 2 * HOUR });
    const newest = await captured(store, { createdAt: NOW - HOUR });
    const otherKey = await captured(store, { key: "key-b", createdAt: NOW - 5 * HOUR });

    const { report } = pass(store, [rules()]);
    const done = await report;
    // The deletion was proven by a lookup after it (the client's own GET before the DELETE aside).
    expect(snapshotRequests(oldest.snapshotId).slice(-2)).toEqual(["DELETE", "GET"]);
    expect(done.deleted).toEqual([
      { snapshotId: oldest.snapshotId, key: "key-a", profileKey: "profile-a", reason: "beyond-keep" },
    ]);
    expect(done.kept.map((i) => i.snapshotId).sort()).toEqual(
      [middle.snapshotId, newest.snapshotId, otherKey.snapshotId].sort(),
    );
    expect(done.failed).toEqual([]);
    expect(await onVercel(oldest.snapshotId)).toBe(false);
    for (const kept of [middle, newest, otherKey]) expect(await onVercel(kept.snapshotId)).toBe(true);
    expect(await recorded(store)).toEqual([middle.snapshotId, newest.snapshotId, otherKey.snapshotId].sort());
  });

  it("deletes an image unused for `unusedFor` even when it is among the newest; 0 keeps images unused", async () => {
    const store = new ImageStore();
    const stale = await captured(store, { createdAt: NOW - HOUR, lastUsedAt: NOW - 2 * DAY });
    const fresh = await captured(store, { createdAt: NOW - 2 * HOUR, lastUsedAt: NOW - DAY + HOUR });
    const forever = await captured(store, {
      profileKey: "profile-b",
      key: "key-b",
      createdAt: 0,
      lastUsedAt: 0,
    });

    const done = await pass(store, [rules(), rules({ profileKey: "profile-b", unusedForMs: 0 })]).report;
    expect(done.deleted.map((d) => [d.snapshotId, d.reason])).toEqual([[stale.snapshotId, "unused"]]);
    expect(done.kept.map((i) => i.snapshotId).sort()).toEqual([fresh.snapshotId, forever.snapshotId].sort());
    expect(await onVercel(stale.snapshotId)).toBe(false);
    expect(await onVercel(fresh.snapshotId)).toBe(true);
    expect(await onVercel(forever.snapshotId)).toBe(true);
  });

  it("never deletes an image an outstanding lease uses; once the lease is released it goes", async () => {
    const store = new ImageStore();
    const pinned = await captured(store, { createdAt: NOW - 3 * HOUR, lastUsedAt: NOW - 9 * DAY });
    const loose = await captured(store, { createdAt: NOW - 2 * HOUR });
    const newest = await captured(store, { createdAt: NOW - HOUR });
    await store.recordChoice({
      leaseId: "vsb_pin",
      key: "key-a",
      profileKey: "profile-a",
      choice: { kind: "image", snapshotId: pinned.snapshotId },
      recordedAt: NOW - 3 * HOUR,
      phase: "enrolled",
    });

    const first = await pass(store, [rules({ keep: 1 })]).report;
    expect(first.inUse.map((i) => i.snapshotId)).toEqual([pinned.snapshotId]);
    expect(first.deleted.map((d) => d.snapshotId)).toEqual([loose.snapshotId]);
    expect(await onVercel(pinned.snapshotId)).toBe(true);
    expect(snapshotRequests(pinned.snapshotId)).not.toContain("DELETE");
    expect(await store.retainedSnapshotIds()).toContain(pinned.snapshotId);

    await store.releaseChoice("vsb_pin");
    const second = await pass(store, [rules({ keep: 1 })]).report;
    expect(second.deleted.map((d) => d.snapshotId)).toEqual([pinned.snapshotId]);
    expect(await onVercel(pinned.snapshotId)).toBe(false);
    expect(await recorded(store)).toEqual([newest.snapshotId]);
  });

  it("never deletes the image a live lease's sandbox would resume from until that lease is released", async () => {
    const store = new ImageStore();
    const sandbox = await sourceSandbox();
    await store.recordChoice({
      leaseId: "vsb_captured",
      key: "key-a",
      profileKey: "profile-a",
      choice: { kind: "cold" },
      recordedAt: NOW - 3 * HOUR,
      phase: "prepared",
    });
    const ofLiveLease = await captured(
      store,
      { sourceLeaseId: "vsb_captured", createdAt: NOW - 3 * HOUR, lastUsedAt: NOW - 9 * DAY },
      sandbox,
    );
    await captured(store, { createdAt: NOW - HOUR });

    const first = await pass(store, [rules({ keep: 1 })]).report;
    expect(first.inUse.map((i) => i.snapshotId)).toEqual([ofLiveLease.snapshotId]);
    expect(first.deleted).toEqual([]);
    // The captured sandbox still resumes: its restore point is intact.
    const resumed = await project.resume(sandbox.name);
    expect((await project.box(resumed).run({ cmd: "true" })).exitCode).toBe(0);

    await project.delete(resumed, false);
    await store.releaseChoice("vsb_captured");
    const second = await pass(store, [rules({ keep: 1 })]).report;
    expect(second.deleted.map((d) => d.snapshotId)).toEqual([ofLiveLease.snapshotId]);
    expect(await onVercel(ofLiveLease.snapshotId)).toBe(false);
  });

  it("never deletes a base image a lease uses or a recorded project image was built on", async () => {
    const store = new ImageStore();
    const base = { kind: "base" as const, key: "base-k", baseKey: "base-k", projectKey: "", baseCommit: "" };
    // Two older base images of one key, each unused for 9 days: past `keep: 1` and past `unusedFor` alike.
    const underProject = await captured(store, { ...base, createdAt: NOW - 5 * HOUR, lastUsedAt: NOW - 9 * DAY });
    const underLease = await captured(store, { ...base, createdAt: NOW - 4 * HOUR, lastUsedAt: NOW - 9 * DAY });
    const loose = await captured(store, { ...base, createdAt: NOW - 3 * HOUR, lastUsedAt: NOW - 9 * DAY });
    const built = await captured(store, { baseImage: underProject.snapshotId, baseKey: "base-k" });
    await store.recordChoice({
      leaseId: "vsb_on_base",
      key: "key-a",
      profileKey: "profile-a",
      choice: { kind: "image", snapshotId: underLease.snapshotId },
      recordedAt: NOW - HOUR,
      phase: "enrolled",
    });

    const first = await pass(store, [rules({ keep: 1, unusedForMs: 7 * DAY })]).report;
    expect(first.deleted.map((d) => d.snapshotId)).toEqual([loose.snapshotId]);
    expect(first.inUse.map((i) => i.snapshotId).sort()).toEqual(
      [underLease.snapshotId, underProject.snapshotId].sort(),
    );
    expect(await onVercel(underProject.snapshotId)).toBe(true);
    expect(await onVercel(underLease.snapshotId)).toBe(true);
    expect(await store.retainedSnapshotIds()).toContain(underProject.snapshotId);

    // Once the lease is gone and the project image deleted (one pass), the base images go too (the next).
    await store.releaseChoice("vsb_on_base");
    const unused = rules({ keep: 1, unusedForMs: 1 });
    const second = await pass(store, [unused]).report;
    expect(second.inUse.map((i) => i.snapshotId)).toEqual([underProject.snapshotId]);
    await pass(store, [unused]).report;
    expect(await recorded(store)).toEqual([]);
    expect(await onVercel(built.snapshotId)).toBe(false);
    expect(await onVercel(underProject.snapshotId)).toBe(false);
  });

  it("a failed deletion is recorded (redacted), takes the image out of service, and a later pass retries it", async () => {
    const store = new ImageStore();
    const doomed = await captured(store, { lastUsedAt: NOW - 2 * DAY });
    let failing = true;
    const refusing = await projectWith(async (input, init) => {
      if (failing && isSnapshotDelete(input, init)) {
        // A transport that echoes the request's credentials in its error, as careless proxies do.
        throw new Error(`proxy refused DELETE with authorization: Bearer ${api.credentials.token}`);
      }
      return api.fetch(input, init);
    });

    const { report, warnings } = pass(store, [rules({ project: refusing })]);
    const first = await report;
    expect(first.deleted).toEqual([]);
    expect(first.failed).toHaveLength(1);
    expect(first.failed[0]).toMatchObject({ snapshotId: doomed.snapshotId, attempts: 1 });
    expect(first.failed[0]!.error).toContain("proxy refused DELETE");
    const [kept] = await store.images();
    expect(kept).toMatchObject({ snapshotId: doomed.snapshotId, deleteAttempts: 1 });
    for (const text of [kept!.lastDeleteError!, first.failed[0]!.error, ...warnings]) {
      expect(text).not.toContain(api.credentials.token);
    }
    expect(warnings.join()).toContain(doomed.snapshotId);
    expect(await store.usable("key-a")).toBeUndefined();
    expect(await onVercel(doomed.snapshotId)).toBe(true);

    failing = false;
    const second = await pass(store, [rules({ project: refusing })]).report;
    expect(second.deleted).toEqual([
      { snapshotId: doomed.snapshotId, key: "key-a", profileKey: "profile-a", reason: "retry" },
    ]);
    expect(await onVercel(doomed.snapshotId)).toBe(false);
    expect(await store.images()).toEqual([]);
  });

  it("forgets an image only once a lookup proves it gone, whatever the deletion answered", async () => {
    const store = new ImageStore();
    const doomed = await captured(store, { lastUsedAt: NOW - 2 * DAY });
    // Vercel acknowledges the deletion (200 with the snapshot), but the snapshot is still there.
    const acknowledgingOnly = await projectWith(async (input, init) =>
      isSnapshotDelete(input, init) ? api.fetch(input, { ...init, method: "GET" }) : api.fetch(input, init),
    );

    const first = await pass(store, [rules({ project: acknowledgingOnly })]).report;
    expect(first.deleted).toEqual([]);
    expect(first.failed[0]!.error).toMatch(/still has it \(status created\)/);
    expect(await recorded(store)).toEqual([doomed.snapshotId]);
    expect(await onVercel(doomed.snapshotId)).toBe(true);

    const second = await pass(store, [rules()]).report;
    expect(second.deleted.map((d) => d.snapshotId)).toEqual([doomed.snapshotId]);
    expect(await onVercel(doomed.snapshotId)).toBe(false);
  });

  it("makes at most `budget` deletions per pass and defers the rest to the next", async () => {
    const store = new ImageStore();
    const images: ImageRecord[] = [];
    for (let i = 0; i < 4; i += 1) images.push(await captured(store, { createdAt: NOW - (10 - i) * HOUR }));
    const before = api.requests().filter((r) => r.method === "DELETE").length;

    const first = await pass(store, [rules({ keep: 1 })], { budget: 2 }).report;
    expect(first.deleted).toHaveLength(2);
    expect(first.deferred).toHaveLength(1);
    expect(api.requests().filter((r) => r.method === "DELETE").length - before).toBe(2);

    const second = await pass(store, [rules({ keep: 1 })], { budget: 2 }).report;
    expect(second.deleted).toHaveLength(1);
    expect(second.deferred).toEqual([]);
    expect(await recorded(store)).toEqual([images[3]!.snapshotId]);
  });

  it("forgets missing images without a request and leaves images of unconfigured profiles alone", async () => {
    const store = new ImageStore();
    const missing = await captured(store, { snapshotId: "snap_missing_on_vercel", lastUsedAt: 0 });
    await store.markMissing(missing.snapshotId);
    const foreign = await captured(store, { profileKey: "profile-gone", key: "key-z", lastUsedAt: 0 });

    const done = await pass(store, [rules()]).report;
    expect(done.forgottenMissing.map((i) => i.snapshotId)).toEqual([missing.snapshotId]);
    expect(done.unconfigured.map((i) => i.snapshotId)).toEqual([foreign.snapshotId]);
    expect(snapshotRequests(missing.snapshotId)).toEqual([]);
    expect(snapshotRequests(foreign.snapshotId)).toEqual([]);
    expect(await recorded(store)).toEqual([foreign.snapshotId]);
    expect(await onVercel(foreign.snapshotId)).toBe(true);
  });

  it("stops before the deletion request once the pass is no longer current, and does nothing when aborted", async () => {
    const store = new ImageStore();
    const doomed = await captured(store, { lastUsedAt: NOW - 2 * DAY });
    let calls = 0;
    const superseded = maintainImages({
      store,
      profiles: [rules()],
      now: NOW,
      signal: new AbortController().signal,
      assertCurrent: () => {
        calls += 1;
        if (calls === 2) throw new Error("maintenance superseded");
      },
    });
    await expect(superseded).rejects.toThrow("maintenance superseded");
    expect(snapshotRequests(doomed.snapshotId)).not.toContain("DELETE");

    const aborted = new AbortController();
    aborted.abort();
    const requests = api.requests().length;
    const done = await pass(store, [rules()], { signal: aborted.signal }).report;
    expect(done.stopped).toBe("aborted");
    expect(done.deleted).toEqual([]);
    expect(api.requests().length).toBe(requests);
    expect(await onVercel(doomed.snapshotId)).toBe(true);
  });
});

describe("retention plan", () => {
  const image = (snapshotId: string, over: Partial<ImageRecord>): ImageRecord => ({
    snapshotId,
    key: "key-a",
    profileKey: "profile-a",
    projectKey: "project-a",
    baseCommit: "c",
    recipeIdentity: "r",
    recipeSource: "script",
    sourceLeaseId: "vsb_s",
    createdAt: 0,
    lastUsedAt: NOW,
    state: "ready",
    ...over,
  });

  it("two profiles sharing a profileKey apply the more generous rules", () => {
    const images = [1, 2, 3].map((n) => image(`snap_${n}`, { createdAt: n, lastUsedAt: NOW - 3 * DAY }));
    const plan = planRetention(
      images,
      new Set(),
      [
        { profileKey: "profile-a", keep: 1, unusedForMs: DAY },
        { profileKey: "profile-a", keep: 2, unusedForMs: 0 },
      ],
      NOW,
    );
    expect(plan.kept.map((i) => i.snapshotId)).toEqual(["snap_3", "snap_2"]);
    expect(plan.doomed.map((d) => [d.image.snapshotId, d.reason])).toEqual([["snap_1", "beyond-keep"]]);
  });

  it("orders deletions least attempted first, so a deletion that keeps failing starves no other", () => {
    const plan = planRetention(
      [
        image("snap_stuck", { deletingSince: 1, deleteAttempts: 5, lastUsedAt: 0 }),
        image("snap_old", { createdAt: 1, lastUsedAt: 10 }),
        image("snap_older", { createdAt: 2, lastUsedAt: 5 }),
        image("snap_new", { createdAt: 3 }),
      ],
      new Set(),
      [{ profileKey: "profile-a", keep: 1, unusedForMs: 0 }],
      NOW,
    );
    expect(plan.doomed.map((d) => [d.image.snapshotId, d.reason])).toEqual([
      ["snap_older", "beyond-keep"],
      ["snap_old", "beyond-keep"],
      ["snap_stuck", "retry"],
    ]);
    expect(plan.kept.map((i) => i.snapshotId)).toEqual(["snap_new"]);
  });
});
