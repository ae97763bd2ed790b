// The pure identities and refresh rule of warm images.
import { describe, expect, it } from "vitest";
import { IMAGE_REFRESH_AGE_MS, imageCurrentReason, imageKeyOf, profileKeyOf } from "../../src/preparation/key.js";
import { imageExpirationMs } from "../../src/provider/steps/warm-images.js";
import { parseSettings } from "../../src/settings/profile.js";

describe("image keys", () => {
  const base = parseSettings({ tokenEnv: "T", teamId: "team_a", projectId: "prj_a" });

  it("change with what shapes an image and nothing else", () => {
    const key = profileKeyOf(base, 2);
    expect(profileKeyOf(base, 4)).not.toBe(key);
    expect(profileKeyOf(parseSettings({ tokenEnv: "T", teamId: "team_a", projectId: "prj_b" }), 2)).not.toBe(key);
    expect(profileKeyOf({ ...base, runtime: "node22" }, 2)).not.toBe(key);
    expect(profileKeyOf({ ...base, region: "fra1" }, 2)).not.toBe(key);
    // The token's location is not part of the image, nor are timeouts or retention.
    expect(profileKeyOf(parseSettings({ tokenEnv: "OTHER", teamId: "team_a", projectId: "prj_a" }), 2)).toBe(key);
    expect(profileKeyOf({ ...base, timeoutMs: 60_000, images: { keep: 5, unusedForMs: 1 } }, 2)).toBe(key);
    expect(imageKeyOf(key, "p1")).not.toBe(imageKeyOf(key, "p2"));
  });
});

describe("image refresh", () => {
  const now = 10 * IMAGE_REFRESH_AGE_MS;
  const image = (ageMs: number) => ({ createdAt: now - ageMs });

  it("a cold start and any preparation work capture", () => {
    expect(imageCurrentReason(undefined, "unchanged", now)).toBeUndefined();
    expect(imageCurrentReason(image(60_000), "refresh", now)).toBeUndefined();
    expect(imageCurrentReason(image(60_000), "initial", now)).toBeUndefined();
  });

  it("an unchanged start keeps a young image and refreshes one 24 h old or more", () => {
    expect(imageCurrentReason(image(IMAGE_REFRESH_AGE_MS - 1), "unchanged", now)).toMatch(/current/);
    expect(imageCurrentReason(image(IMAGE_REFRESH_AGE_MS), "unchanged", now)).toBeUndefined();
    expect(imageCurrentReason(image(3 * IMAGE_REFRESH_AGE_MS), "unchanged", now)).toBeUndefined();
  });
});

describe("image snapshot expiry", () => {
  it("outlives the unused age by a day, and `unusedFor: 0` (never) captures without expiry", () => {
    const day = 24 * 60 * 60_000;
    expect(imageExpirationMs(14 * day)).toBe(15 * day);
    expect(imageExpirationMs(0)).toBe(0);
  });
});
