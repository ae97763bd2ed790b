// The pure identities and refresh rule of warm images.
import { describe, expect, it } from "vitest";
import { baseKeyOf, imageKeyOf, profileKeyOf, type RuntimeIdentity } from "../../src/preparation/key.js";
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

describe("base image keys", () => {
  const profileKey = profileKeyOf(parseSettings({ tokenEnv: "T", teamId: "team_a", projectId: "prj_a" }), 2);
  const runtime: RuntimeIdentity = {
    nodeBootstrap: { sha256: "a".repeat(64), openclawVersion: "2026.9.2", enabledPluginIds: ["x", "y"] },
    workerBundle: { sha256: "b".repeat(64), packageRelativePath: "worker-archives/b.tgz" },
  };

  it("change with the runtime's digests and the sandbox shape, never with the order of plugin ids", () => {
    const key = baseKeyOf(profileKey, runtime);
    expect(
      baseKeyOf(profileKey, { ...runtime, nodeBootstrap: { ...runtime.nodeBootstrap, sha256: "c".repeat(64) } }),
    ).not.toBe(key);
    expect(
      baseKeyOf(profileKey, { ...runtime, workerBundle: { ...runtime.workerBundle, sha256: "d".repeat(64) } }),
    ).not.toBe(key);
    expect(
      baseKeyOf(profileKey, { ...runtime, nodeBootstrap: { ...runtime.nodeBootstrap, openclawVersion: "2026.9.4" } }),
    ).not.toBe(key);
    const otherShape = profileKeyOf(parseSettings({ tokenEnv: "T", teamId: "team_a", projectId: "prj_a" }), 4);
    expect(baseKeyOf(otherShape, runtime)).not.toBe(key);
    expect(
      baseKeyOf(profileKey, { ...runtime, nodeBootstrap: { ...runtime.nodeBootstrap, enabledPluginIds: ["y", "x"] } }),
    ).toBe(key);
    // Never the key of a project image.
    expect(key).not.toBe(imageKeyOf(profileKey, ""));
  });
});

describe("image snapshot expiry", () => {
  it("outlives the unused age by a day, and `unusedFor: 0` (never) captures without expiry", () => {
    const day = 24 * 60 * 60_000;
    expect(imageExpirationMs(14 * day)).toBe(15 * day);
    expect(imageExpirationMs(0)).toBe(0);
  });
});
