// The rerun cache's directory (cache.ts): one run at a time holds it (a second gets none until the first releases
// it, and a dead holder's lock is taken over); --fresh discards the emulator's store and the record; the per-run
// id-range skeletons the emulator leaves in its image dir are pruned while the shared Node copy stays; a run
// releases only its own lock.
import { existsSync } from "node:fs";
import { mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openCache } from "../../src/main-job/cache.js";

let dir = "";

beforeAll(async () => {
  dir = await mkdtemp(path.join(tmpdir(), "vsb-disk-"));
});

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe("the main job's rerun cache dir", () => {
  it("is held by one run at a time, keeps its record, prunes id ranges, and --fresh discards it", async () => {
    const cacheDir = path.join(dir, "main-job");
    const first = await openCache(cacheDir, false);
    expect(first?.record).toBeUndefined();
    await first!.save({ format: 1, front: { address: "10.215.1.2", port: 40000 } });
    expect(await openCache(cacheDir, false)).toBeUndefined();
    await first!.release();

    const image = path.join(cacheDir, "emulator", "image", "abc");
    await mkdir(path.join(image, "ids-65536"), { recursive: true });
    await mkdir(path.join(image, "node"), { recursive: true });
    await writeFile(path.join(cacheDir, "emulator", "keep-me"), "x");
    const second = await openCache(cacheDir, false);
    expect(second?.record).toEqual({ format: 1, front: { address: "10.215.1.2", port: 40000 } });
    expect(existsSync(path.join(image, "ids-65536"))).toBe(false);
    expect(existsSync(path.join(image, "node"))).toBe(true);
    await second!.release();

    // A holder that died without releasing: its lock is taken over.
    await writeFile(path.join(cacheDir, "lock"), "999999999");
    const fresh = await openCache(cacheDir, true);
    expect(fresh?.record).toBeUndefined();
    expect(existsSync(path.join(cacheDir, "emulator"))).toBe(false);
    expect(existsSync(path.join(cacheDir, "images.json"))).toBe(false);
    await fresh!.release();
  });

  it("a release leaves the lock alone once another live run holds it", async () => {
    const cacheDir = path.join(dir, "taken-over");
    const mine = await openCache(cacheDir, false);
    // Another run took the lock over meanwhile (this process's pid looked dead to it): a live pid is in it now.
    await writeFile(path.join(cacheDir, "lock"), String(process.ppid));
    await mine!.release();
    expect(await readFile(path.join(cacheDir, "lock"), "utf8")).toBe(String(process.ppid));
    expect(await openCache(cacheDir, false)).toBeUndefined();
  });
});
