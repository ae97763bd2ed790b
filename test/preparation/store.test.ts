import { mkdir, readdir, readFile, stat, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import {
  ChoiceConflictError,
  ImageStore,
  ImageStoreFullError,
  ImageUnusableError,
  STORE_BOUNDS,
} from "../../src/preparation/store.js";
import type { AllocationChoice, ImageRecord, PreparationDiagnostics } from "../../src/preparation/types.js";
import { recordingLogger, renamesFailing, tempStateDirs } from "../support/state-files.js";
import { imageRecord } from "./records.js";

const stateDir = tempStateDirs("image-store");

const storeFile = (dir: string) => join(dir, "vercel-sandbox", "images.json");

function choice(leaseId: string, snapshotId?: string, over: Partial<AllocationChoice> = {}): AllocationChoice {
  return {
    leaseId,
    key: "key-a",
    profileKey: "profile-a",
    choice: snapshotId ? { kind: "image", snapshotId } : { kind: "cold" },
    recordedAt: 10,
    phase: "pending",
    ...over,
  };
}

function diagnostics(leaseId: string, at: number): PreparationDiagnostics {
  return {
    leaseId,
    at,
    key: "key-a",
    projectKey: "project-a",
    baseCommit: "0123abc",
    recipe: { source: "script", identity: "recipe-1", notes: [], warnings: [] },
    start: "cold",
    event: "initial",
    phases: [{ phase: "onCreateCommand", ms: 12, ok: true }],
    captured: true,
    imageId: "snap_1",
    totalMs: 40,
  };
}

const ids = (images: ImageRecord[]) => images.map((i) => i.snapshotId);

describe("image store", () => {
  it("keeps images, choices and diagnostics across a restart, in a private version 1 file", async () => {
    const dir = await stateDir();
    const first = ImageStore.inDirectory(dir);
    await first.recordImage(imageRecord("snap_old", { createdAt: 1, lastUsedAt: 1 }));
    await first.recordImage(imageRecord("snap_new", { createdAt: 2, lastUsedAt: 2 }));
    await first.touch("snap_old", 70);
    await first.recordChoice(choice("vsb_1", "snap_new"));
    await first.advanceChoice("vsb_1", "prepared");
    await first.recordDiagnostics(diagnostics("vsb_1", 5));

    const restarted = ImageStore.inDirectory(dir);
    expect(ids(await restarted.images())).toEqual(["snap_new", "snap_old"]);
    expect((await restarted.images())[1]!.lastUsedAt).toBe(70);
    expect((await restarted.usable("key-a"))?.snapshotId).toBe("snap_new");
    expect(await restarted.choiceFor("vsb_1")).toEqual(choice("vsb_1", "snap_new", { phase: "prepared" }));
    expect(await restarted.diagnostics()).toEqual([diagnostics("vsb_1", 5)]);
    expect([...(await restarted.retainedSnapshotIds())].sort()).toEqual(["snap_new", "snap_old"]);
    expect((await stat(storeFile(dir))).mode & 0o777).toBe(0o600);
    expect(JSON.parse(await readFile(storeFile(dir), "utf8")).version).toBe(1);
  });

  it("a refused image serves no allocation again, and its first refusal survives another instance's stale copy", async () => {
    const dir = await stateDir();
    const stale = ImageStore.inDirectory(dir);
    await stale.recordImage(imageRecord("snap_r", { createdAt: 1 }));
    const refusing = ImageStore.inDirectory(dir);
    await refusing.refuse("snap_r", "the OpenClaw runtime files differ", 5);
    await refusing.refuse("snap_r", "later reason", 9);
    await stale.touch("snap_r", 500);
    expect(await stale.usable("key-a")).toBeUndefined();
    const [image] = await ImageStore.inDirectory(dir).images();
    expect(image).toMatchObject({ refusedAt: 5, refusedReason: "the OpenClaw runtime files differ", lastUsedAt: 500 });
  });

  it("asked for a commit, serves only an image built at that commit, however new the others are", async () => {
    const store = new ImageStore();
    await store.recordImage(imageRecord("snap_at", { baseCommit: "aaa", createdAt: 1 }));
    await store.recordImage(imageRecord("snap_newer", { baseCommit: "bbb", createdAt: 2 }));
    expect((await store.usable("key-a", { baseCommit: "aaa" }))?.snapshotId).toBe("snap_at");
    expect(await store.usable("key-a", { baseCommit: "ccc" })).toBeUndefined();
    expect((await store.usable("key-a"))?.snapshotId).toBe("snap_newer");
  });

  it("asked for a base key, serves only an image holding that runtime", async () => {
    const store = new ImageStore();
    await store.recordImage(imageRecord("snap_old_runtime", { baseKey: "base-1", createdAt: 2 }));
    await store.recordImage(imageRecord("snap_new_runtime", { baseKey: "base-2", createdAt: 1 }));
    expect((await store.usable("key-a", { baseKey: "base-2" }))?.snapshotId).toBe("snap_new_runtime");
    expect(await store.usable("key-a", { baseKey: "base-3" })).toBeUndefined();
  });

  it("grants one base capture per key at a time across instances, again once it is finished or abandoned", async () => {
    const dir = await stateDir();
    const gateway = ImageStore.inDirectory(dir);
    const cli = ImageStore.inDirectory(dir);
    const claims = await Promise.all([
      gateway.claimCapture("base-1", "vsb_a", 100),
      cli.claimCapture("base-1", "vsb_b", 100),
      gateway.claimCapture("base-1", "vsb_c", 101),
    ]);
    expect(claims.filter(Boolean)).toHaveLength(1);
    // Another key is not held up.
    expect(await cli.claimCapture("base-2", "vsb_b", 102)).toBe(true);
    const owner = ["vsb_a", "vsb_b", "vsb_c"][claims.indexOf(true)] as string;
    const other = owner === "vsb_a" ? "vsb_b" : "vsb_a";
    expect(await cli.claimCapture("base-1", other, 200)).toBe(false);
    // A claim whose owner never finished (a crashed gateway) lapses after 30 minutes.
    expect(await cli.claimCapture("base-1", other, 100 + 30 * 60_000)).toBe(true);
    await gateway.finishCapture("base-1", owner);
    expect(await gateway.claimCapture("base-1", "vsb_d", 100 + 30 * 60_000 + 1)).toBe(false);
    await cli.finishCapture("base-1", other);
    expect(await gateway.claimCapture("base-1", "vsb_d", 100 + 30 * 60_000 + 2)).toBe(true);
  });

  it("a lease falls back from its image to a cold start only once the image is refused, and a stale copy keeps it", async () => {
    const dir = await stateDir();
    const stale = ImageStore.inDirectory(dir);
    await stale.recordImage(imageRecord("snap_f"));
    await stale.recordChoice(choice("vsb_f", "snap_f"));
    const store = ImageStore.inDirectory(dir);
    await expect(store.fallBackCold("vsb_f", 20)).rejects.toThrow(ChoiceConflictError);
    await store.refuse("snap_f", "the node on PATH differs", 20);
    const fallen = await store.fallBackCold("vsb_f", 21);
    expect(fallen).toMatchObject({ choice: { kind: "cold" }, fellBack: true, phase: "pending" });
    // The stale instance, which still holds the image choice recorded earlier, writes: the fallback stands.
    await stale.advanceChoice("vsb_f", "pending");
    await stale.touch("snap_f", 30);
    expect((await ImageStore.inDirectory(dir).choiceFor("vsb_f"))?.choice).toEqual({ kind: "cold" });
    expect(await store.fallBackCold("vsb_f", 22)).toMatchObject({ recordedAt: 21 });
  });

  it("serves the newest ready image of a key; missing images and images being deleted serve none", async () => {
    const store = new ImageStore();
    await store.recordImage(imageRecord("snap_1", { createdAt: 1 }));
    await store.recordImage(imageRecord("snap_2", { createdAt: 2 }));
    await store.recordImage(imageRecord("snap_3", { createdAt: 3 }));
    await store.recordImage(imageRecord("snap_other", { key: "key-b", createdAt: 9 }));
    expect((await store.usable("key-a"))?.snapshotId).toBe("snap_3");
    await store.markMissing("snap_3");
    expect((await store.usable("key-a"))?.snapshotId).toBe("snap_2");
    expect(await store.beginDeletion("snap_2", 50)).toBe("started");
    expect((await store.usable("key-a"))?.snapshotId).toBe("snap_1");
    expect(await store.usable("key-c")).toBeUndefined();
    // Still recorded (retention forgets them), so sandbox release must keep them.
    expect(ids(await store.images())).toEqual(["snap_other", "snap_3", "snap_2", "snap_1"]);
    expect(await store.retainedSnapshotIds()).toEqual(new Set(["snap_1", "snap_2", "snap_3", "snap_other"]));
    await store.forget("snap_2", 60);
    await store.recordImage(imageRecord("snap_2", { createdAt: 2 }));
    expect(ids(await store.images())).toEqual(["snap_other", "snap_3", "snap_1"]);
  });

  it("a lease's choice is fixed once recorded, only moves forward, and ends with the lease", async () => {
    const store = new ImageStore();
    await store.recordImage(imageRecord("snap_1"));
    await store.recordChoice(choice("vsb_1", "snap_1"));
    // A replay records the same choice again (a later clock) and changes nothing.
    await store.recordChoice(choice("vsb_1", "snap_1", { recordedAt: 99 }));
    await expect(store.recordChoice(choice("vsb_1"))).rejects.toBeInstanceOf(ChoiceConflictError);
    await expect(store.recordChoice(choice("vsb_1", "snap_1", { key: "key-b" }))).rejects.toThrow(/never changes/);
    expect(await store.choiceFor("vsb_1")).toEqual(choice("vsb_1", "snap_1"));

    await store.advanceChoice("vsb_1", "enrolled");
    await store.advanceChoice("vsb_1", "prepared");
    expect((await store.choiceFor("vsb_1"))?.phase).toBe("enrolled");
    await expect(store.advanceChoice("vsb_unknown", "prepared")).rejects.toThrow(/record one before advancing/);

    await store.releaseChoice("vsb_1");
    expect(await store.choiceFor("vsb_1")).toBeUndefined();
    await store.advanceChoice("vsb_1", "enrolled");
    await expect(store.recordChoice(choice("vsb_1"))).rejects.toThrow(/was destroyed/);
  });

  it("an image choice needs an image that can serve allocations", async () => {
    const store = new ImageStore();
    await store.recordImage(imageRecord("snap_gone"));
    await store.recordImage(imageRecord("snap_doomed"));
    await store.markMissing("snap_gone");
    expect(await store.beginDeletion("snap_doomed", 1)).toBe("started");
    for (const snapshotId of ["snap_unknown", "snap_gone", "snap_doomed"]) {
      await expect(store.recordChoice(choice(`vsb_${snapshotId}`, snapshotId))).rejects.toBeInstanceOf(
        ImageUnusableError,
      );
    }
    expect(await store.choiceFor("vsb_snap_gone")).toBeUndefined();
  });

  it("an image an outstanding lease uses is pinned until the lease is released", async () => {
    const store = new ImageStore();
    await store.recordImage(imageRecord("snap_1"));
    await store.recordChoice(choice("vsb_1", "snap_1"));
    await store.recordChoice(choice("vsb_2"));
    expect(await store.pinnedSnapshotIds()).toEqual(new Set(["snap_1"]));
    expect(await store.beginDeletion("snap_1", 5)).toBe("pinned");
    expect((await store.usable("key-a"))?.snapshotId).toBe("snap_1");
    await store.releaseChoice("vsb_1");
    expect(await store.pinnedSnapshotIds()).toEqual(new Set());
    expect(await store.beginDeletion("snap_1", 6)).toBe("started");
    expect(await store.beginDeletion("snap_never", 6)).toBe("gone");
  });

  it("an image captured from an outstanding lease's sandbox is pinned until that lease is released", async () => {
    const store = new ImageStore();
    await store.recordChoice(choice("vsb_source"));
    await store.recordImage(imageRecord("snap_captured", { sourceLeaseId: "vsb_source" }));
    await store.recordImage(imageRecord("snap_elsewhere", { sourceLeaseId: "vsb_gone" }));
    expect(await store.pinnedSnapshotIds()).toEqual(new Set(["snap_captured"]));
    expect(await store.beginDeletion("snap_captured", 5)).toBe("pinned");
    await store.releaseChoice("vsb_source");
    expect(await store.beginDeletion("snap_captured", 6)).toBe("started");
  });

  it("records failed deletions, and forgetting an image drops it for good", async () => {
    const dir = await stateDir();
    const store = ImageStore.inDirectory(dir);
    await store.recordImage(imageRecord("snap_1"));
    await store.deletionFailed("snap_1", "first");
    await store.deletionFailed("snap_1", "second");
    const [failed] = await ImageStore.inDirectory(dir).images();
    expect(failed).toMatchObject({ snapshotId: "snap_1", deleteAttempts: 2, lastDeleteError: "second" });
    await store.forget("snap_1", 9);
    expect(await ImageStore.inDirectory(dir).images()).toEqual([]);
    expect(await ImageStore.inDirectory(dir).retainedSnapshotIds()).toEqual(new Set());
  });

  it("keeps the newest 50 diagnostics", async () => {
    const dir = await stateDir();
    const store = ImageStore.inDirectory(dir);
    for (let at = 0; at < 60; at += 1) await store.recordDiagnostics(diagnostics(`vsb_${at % 7}`, at));
    const kept = await ImageStore.inDirectory(dir).diagnostics();
    expect(kept.map((d) => d.at)).toEqual(Array.from({ length: 50 }, (_, i) => 59 - i));
  });

  it.each([
    ["not JSON", "{ images: "],
    ["another shape", JSON.stringify({ version: 2, images: [] })],
    ["null", "null"],
  ])("a damaged file (%s) is reported once, moved aside and rebuilt", async (_what, body) => {
    const dir = await stateDir();
    await mkdir(join(dir, "vercel-sandbox"), { recursive: true });
    await writeFile(storeFile(dir), body);
    const { warnings, logger } = recordingLogger();
    const store = ImageStore.inDirectory(dir, { logger });

    expect(await store.images()).toEqual([]);
    await store.recordImage(imageRecord("snap_1"));
    expect(await store.choiceFor("vsb_1")).toBeUndefined();

    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toContain("image store");
    expect(warnings[0]).toContain("damaged");
    const files = await readdir(join(dir, "vercel-sandbox"));
    const aside = files.filter((f) => /^images\.json\.corrupt-[0-9]+$/.test(f));
    expect(aside).toHaveLength(1);
    expect(await readFile(join(dir, "vercel-sandbox", aside[0]!), "utf8")).toBe(body);
    expect(ids(await ImageStore.inDirectory(dir).images())).toEqual(["snap_1"]);
  });

  it("a malformed record is dropped and the others are kept", async () => {
    const dir = await stateDir();
    await mkdir(join(dir, "vercel-sandbox"), { recursive: true });
    const { state: _state, ...stateless } = imageRecord("snap_bad");
    const body = {
      version: 1,
      images: { snap_ok: imageRecord("snap_ok"), snap_bad: stateless, snap_elsewhere: imageRecord("snap_mismatch") },
      choices: { vsb_1: choice("vsb_1"), vsb_2: { ...choice("vsb_2"), phase: "flying" } },
    };
    await writeFile(storeFile(dir), JSON.stringify(body));
    const { warnings, logger } = recordingLogger();
    const store = ImageStore.inDirectory(dir, { logger });
    expect(ids(await store.images())).toEqual(["snap_ok"]);
    expect(await store.choiceFor("vsb_1")).toEqual(choice("vsb_1"));
    expect(await store.choiceFor("vsb_2")).toBeUndefined();
    expect(await store.diagnostics()).toEqual([]);
    expect(warnings).toEqual([]);
  });

  it("a failed write is logged, and the next write stores every record", async () => {
    const dir = await stateDir();
    const { warnings, logger } = recordingLogger();
    const store = ImageStore.inDirectory(dir, { logger, fs: renamesFailing(1) });
    await store.recordImage(imageRecord("snap_1"));
    expect(warnings.join()).toContain("disk full");
    expect(ids(await store.images())).toEqual(["snap_1"]);
    await store.recordChoice(choice("vsb_1", "snap_1"));
    const restarted = ImageStore.inDirectory(dir);
    expect(ids(await restarted.images())).toEqual(["snap_1"]);
    expect(await restarted.choiceFor("vsb_1")).toEqual(choice("vsb_1", "snap_1"));
    expect((await readdir(join(dir, "vercel-sandbox"))).filter((f) => f.endsWith(".tmp"))).toEqual([]);
  });

  it("two instances on one file keep each other's records and never resurrect a forgotten image", async () => {
    const dir = await stateDir();
    const a = ImageStore.inDirectory(dir);
    const b = ImageStore.inDirectory(dir);
    // Both have read the (empty) file before either writes, as a gateway and a CLI started together would.
    expect(await a.images()).toEqual([]);
    expect(await b.images()).toEqual([]);
    await a.recordImage(imageRecord("snap_a", { createdAt: 1, lastUsedAt: 1 }));
    await b.recordImage(imageRecord("snap_b", { createdAt: 2, lastUsedAt: 2 }));
    await Promise.all([
      a.recordChoice(choice("vsb_a", "snap_b")),
      b.recordChoice(choice("vsb_b")),
      a.recordDiagnostics(diagnostics("vsb_a", 1)),
      b.recordDiagnostics(diagnostics("vsb_b", 2)),
    ]);
    // b proves snap_a deleted; a still holds it in memory and touches it afterwards.
    expect(await b.beginDeletion("snap_a", 3)).toBe("started");
    await b.forget("snap_a", 4);
    await a.touch("snap_a", 5);
    await a.touch("snap_b", 6);
    // a releases vsb_b (destroyed); b, which recorded it, advances it afterwards.
    await a.releaseChoice("vsb_b");
    await b.advanceChoice("vsb_b", "enrolled");
    // A lease's choice recorded by one instance is seen (and enforced) by the other.
    await expect(b.recordChoice(choice("vsb_a"))).rejects.toBeInstanceOf(ChoiceConflictError);

    const fresh = ImageStore.inDirectory(dir);
    expect(await fresh.images()).toEqual([imageRecord("snap_b", { createdAt: 2, lastUsedAt: 6 })]);
    expect(await fresh.choiceFor("vsb_a")).toEqual(choice("vsb_a", "snap_b"));
    expect(await fresh.choiceFor("vsb_b")).toBeUndefined();
    expect((await fresh.diagnostics()).map((d) => d.leaseId)).toEqual(["vsb_b", "vsb_a"]);
    // A reader that never writes still sees the other instances' changes.
    expect(ids(await a.images())).toEqual(["snap_b"]);
    expect(await b.pinnedSnapshotIds()).toEqual(new Set(["snap_b"]));
  });
});

describe("image store bounds", () => {
  it("refuses an image past the image bound and evicts nothing", async () => {
    const store = new ImageStore();
    const keys = STORE_BOUNDS.keys;
    for (let i = 0; i < STORE_BOUNDS.images; i += 1) {
      await store.recordImage(imageRecord(`snap_${i}`, { key: `key-${i % keys}`, createdAt: i }));
    }
    const full = await store.recordImage(imageRecord("snap_more", { key: "key-0" })).catch((e) => e);
    expect(full).toBeInstanceOf(ImageStoreFullError);
    expect(full.bound).toBe("images");
    expect(full.message).toContain("openclaw vercel-sandbox gc");
    await expect(store.assertRoomForImage("key-0")).rejects.toBeInstanceOf(ImageStoreFullError);
    // A replay of a known capture is not a new image.
    await store.recordImage(imageRecord("snap_0", { key: "key-0", createdAt: 0 }));
    expect(await store.images()).toHaveLength(STORE_BOUNDS.images);

    await store.forget("snap_7", 1);
    await store.recordImage(imageRecord("snap_more", { key: "key-0" }));
    expect(ids(await store.images())).toContain("snap_more");
  });

  it("refuses an image of a new key past the key bound, but not another image of a known key", async () => {
    const store = new ImageStore();
    for (let i = 0; i < STORE_BOUNDS.keys; i += 1)
      await store.recordImage(imageRecord(`snap_${i}`, { key: `key-${i}` }));
    const full = await store.recordImage(imageRecord("snap_new_key", { key: "key-new" })).catch((e) => e);
    expect(full).toBeInstanceOf(ImageStoreFullError);
    expect(full.bound).toBe("keys");
    await store.assertRoomForImage("key-3");
    await store.recordImage(imageRecord("snap_known_key", { key: "key-3" }));
    expect(await store.images()).toHaveLength(STORE_BOUNDS.keys + 1);
  });

  it("refuses a new lease past the choice bound until a lease is released", async () => {
    const store = new ImageStore();
    for (let i = 0; i < STORE_BOUNDS.choices; i += 1) await store.recordChoice(choice(`vsb_${i}`));
    const full = await store.recordChoice(choice("vsb_more")).catch((e) => e);
    expect(full).toBeInstanceOf(ImageStoreFullError);
    expect(full.bound).toBe("choices");
    expect(full.message).toContain("destroy workers");
    expect(await store.choiceFor("vsb_0")).toEqual(choice("vsb_0"));
    await store.releaseChoice("vsb_0");
    await store.recordChoice(choice("vsb_more"));
    expect(await store.choiceFor("vsb_more")).toEqual(choice("vsb_more"));
  });
});
