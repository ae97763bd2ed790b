// `images warm`'s shortcut (src/cli/warm.ts): a base image of the profile's shape and of this CLI's OpenClaw
// version makes it a no-op, but only one that may still serve allocations. One that retention has begun to
// delete, or a worker refused, is not current: the command goes to the gateway (here: none answers).
import { describe, expect, it } from "vitest";
import { vercelProfiles } from "../../src/cli/profiles.js";
import { type WarmInput, warmBaseImage } from "../../src/cli/warm.js";
import { createOwnedTempDir } from "../../src/infra/index.js";
import { ImageStore, profileKeyOf } from "../../src/preparation/index.js";
import { VercelClient } from "../../src/vercel/index.js";
import { imageRecord } from "../preparation/records.js";

const VALID = { teamId: "team_1", projectId: "prj_1", tokenEnv: "VERCEL_TOKEN" };
const config = { cloudWorkers: { profiles: { spec: { provider: "vercel-sandbox", settings: VALID } } } };

async function withStore(over: Parameters<typeof imageRecord>[1]) {
  const dir = await createOwnedTempDir("vsb-warm-shortcut-");
  const [profile] = vercelProfiles(config, "scope");
  if (!profile?.ok) throw new Error("the spec's profile is invalid");
  const profileKey = profileKeyOf(profile.settings, profile.settings.vcpus);
  const store = ImageStore.inDirectory(dir.path);
  await store.recordImage(
    imageRecord("snap_base1", { kind: "base", key: "b".repeat(64), profileKey, openclawVersion: "2026.9.2", ...over }),
  );
  const input: WarmInput = {
    config,
    pluginScope: "scope",
    stateDir: dir.path,
    call: async () => {
      throw new Error("connect ECONNREFUSED");
    },
    client: new VercelClient({ env: {} }),
    progress: () => undefined,
    signal: new AbortController().signal,
    openclawVersion: "2026.9.2",
  };
  return { dir, input };
}

describe("images warm: the current base image", () => {
  it("a ready base image of this shape and version: nothing is built and the gateway is not asked", async () => {
    const { dir, input } = await withStore({});
    try {
      await expect(warmBaseImage(input)).resolves.toMatchObject({ built: false, snapshotId: "snap_base1" });
    } finally {
      await dir.remove();
    }
  });

  it.each([
    ["retention has begun to delete", { deletingSince: 1 }],
    ["a worker refused", { refusedAt: 1, refusedReason: "runtime changed" }],
  ])("one %s is not current: the command goes to the gateway", async (_, over) => {
    const { dir, input } = await withStore(over);
    try {
      await expect(warmBaseImage(input)).rejects.toThrow(/the gateway did not answer environments\.list/);
    } finally {
      await dir.remove();
    }
  });
});
