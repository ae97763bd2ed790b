// The base runtime image between runs (base-reuse.ts), pure: the kept images are offered to the next VM1's store
// only when the API front has the last run's URL (another URL is another profile key) and --fresh is not given;
// what is offered is exactly the plugin's ready base records, and a store holding refused, deleting, project or
// malformed records yields none of them.
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { createOwnedTempDir } from "../../src/infra/index.js";
import { baseLine, frontOf, planBase, readyBases, seededStore } from "../../src/main-job/base-reuse.js";
import type { CachedBase, ReuseRecord } from "../../src/main-job/reuse.js";
import { ImageStore } from "../../src/preparation/index.js";
import { imageRecord } from "../preparation/records.js";

const key = "e".repeat(64);
const baseRecord = {
  snapshotId: "snap_Base1",
  kind: "base",
  key,
  baseKey: key,
  profileKey: "p".repeat(64),
  state: "ready",
  createdAt: 1,
  lastUsedAt: 2,
};
const base: CachedBase = { snapshotId: "snap_Base1", key, record: baseRecord };
const front = { address: "10.215.7.9", port: 40123 };
const record: ReuseRecord = { format: 1, front, base: [base] };

describe("the base runtime image on a rerun", () => {
  it("is offered when it was kept, the emulator restored it and the API front's URL is the same", () => {
    expect(frontOf("https://10.215.7.9:40123")).toEqual(front);
    expect(planBase(record, front, { fresh: false, available: ["snap_Base1"] })).toEqual({ offer: [base] });
  });

  it("is not offered with another API front URL, with --fresh, or when the emulator no longer holds it", () => {
    expect(planBase(record, { ...front, port: 40124 }, { fresh: false, available: ["snap_Base1"] })).toEqual({
      none: "the API front's URL changed, so the profile key differs",
    });
    expect(planBase(record, { ...front, address: "10.215.7.10" }, { fresh: false, available: ["snap_Base1"] })).toEqual(
      { none: "the API front's URL changed, so the profile key differs" },
    );
    expect(planBase(record, front, { fresh: true, available: ["snap_Base1"] })).toEqual({ none: "--fresh" });
    expect(planBase(record, front, { fresh: false, available: [] })).toEqual({ none: "none kept" });
    expect(planBase(undefined, front, { fresh: false, available: [] })).toEqual({ none: "none kept" });
  });

  it("the seeded store holds the offered records and nothing else, and reads back as the same bases", () => {
    const text = seededStore([base]);
    const parsed = JSON.parse(text);
    expect(parsed).toEqual({
      version: 1,
      images: { snap_Base1: baseRecord },
      forgotten: {},
      choices: {},
      released: {},
      diagnostics: [],
      captures: {},
    });
    expect(readyBases(text)).toEqual([base]);
  });

  it("the plugin's own image store reads the seeded file and serves the offered base image", async () => {
    // A record as the plugin on VM1 wrote it (every field its store keeps), offered to the next VM1's store.
    const written = imageRecord("snap_Base2", { kind: "base", key, baseKey: key, projectKey: "" });
    const dir = await createOwnedTempDir("vsb-seeded-store-");
    try {
      mkdirSync(join(dir.path, "vercel-sandbox"));
      const [kept] = readyBases(JSON.stringify({ version: 1, images: { snap_Base2: written } }));
      writeFileSync(join(dir.path, "vercel-sandbox", "images.json"), seededStore([kept!]));
      expect(await ImageStore.inDirectory(dir.path).usable(key)).toEqual(written);
    } finally {
      await dir.remove();
    }
  });

  it("only ready base records of the plugin's store are kept", () => {
    const images = {
      a: { ...baseRecord, snapshotId: "snap_A" },
      project: { ...baseRecord, snapshotId: "snap_P", kind: undefined },
      missing: { ...baseRecord, snapshotId: "snap_M", state: "missing" },
      refused: { ...baseRecord, snapshotId: "snap_R", refusedAt: 5 },
      deleting: { ...baseRecord, snapshotId: "snap_D", deletingSince: 5 },
      badId: { ...baseRecord, snapshotId: "../snap" },
      badKey: { ...baseRecord, snapshotId: "snap_K", key: "short" },
    };
    expect(readyBases(JSON.stringify({ version: 1, images })).map((b) => b.snapshotId)).toEqual(["snap_A"]);
    expect(readyBases("not json")).toEqual([]);
    expect(readyBases('{"images":null}')).toEqual([]);
  });

  it("the summary says whether the offered image was used (no runtime install on message 1's VM2)", () => {
    expect(baseLine({ offer: [base] }, false, [base])).toBe(
      `  base runtime image snap_Base1 (key ${key.slice(0, 12)}): reused: message 1's VM2 ran no runtime install; kept for the next run: snap_Base1 (key ${key.slice(0, 12)})`,
    );
    expect(baseLine({ none: "none kept" }, true, [])).toBe(
      "  base runtime image: built by message 1's VM2 (runtime install); none offered (none kept)",
    );
  });
});
