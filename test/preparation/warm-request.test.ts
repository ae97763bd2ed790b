// The base-image requests `images warm` leaves for the gateway's next worker without a project
// (src/preparation/warm-request.ts): each run's request is its own, each is taken by one provision, and one run's
// withdrawal never removes another's; an expired request is taken by nobody and goes.
import { readdir } from "node:fs/promises";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createOwnedTempDir, type OwnedTempDir } from "../../src/infra/index.js";
import {
  BASE_REQUEST_TTL_MS,
  requestBaseImage,
  takeBaseImageRequest,
  withdrawBaseImageRequest,
} from "../../src/preparation/warm-request.js";

const KEY = "a".repeat(64);
const OTHER = "b".repeat(64);
let dir: OwnedTempDir;

beforeEach(async () => {
  dir = await createOwnedTempDir("vsb-warm-request-");
});
afterEach(async () => {
  await dir.remove();
});

const left = async () => readdir(path.join(dir.path, "vercel-sandbox", "base-requests")).catch(() => []);

describe("base-image requests", () => {
  it("two runs of one shape at once: one run's withdrawal leaves the other's request for its worker", async () => {
    const now = Date.now();
    const first = await requestBaseImage(dir.path, KEY, now);
    await requestBaseImage(dir.path, KEY, now);
    await withdrawBaseImageRequest(first);
    expect(await takeBaseImageRequest(dir.path, KEY, now)).toBe(true);
    expect(await takeBaseImageRequest(dir.path, KEY, now)).toBe(false);
    expect(await left()).toEqual([]);
  });

  it("two requests of one shape are taken by two provisions, one each, and by none of another shape", async () => {
    const now = Date.now();
    await requestBaseImage(dir.path, KEY, now);
    await requestBaseImage(dir.path, KEY, now);
    expect(await takeBaseImageRequest(dir.path, OTHER, now)).toBe(false);
    const taken = await Promise.all([1, 2, 3].map(() => takeBaseImageRequest(dir.path, KEY, now)));
    expect(taken.filter(Boolean)).toHaveLength(2);
    expect(await left()).toEqual([]);
  });

  it("an expired request is taken by nobody and is removed", async () => {
    const now = Date.now();
    await requestBaseImage(dir.path, KEY, now - BASE_REQUEST_TTL_MS - 1);
    expect(await takeBaseImageRequest(dir.path, KEY, now)).toBe(false);
    expect(await left()).toEqual([]);
  });

  it("without a state dir, or before any request, nothing is taken", async () => {
    expect(await takeBaseImageRequest(undefined, KEY, Date.now())).toBe(false);
    expect(await takeBaseImageRequest(dir.path, KEY, Date.now())).toBe(false);
  });
});
