// A maintenance pass over several profiles: one profile's failure (bad settings, an unreachable project) is
// that profile's alone. The pass still releases the orphans and runs retention for the others, then reports
// each failed profile with its redacted reason, in the log and in the error core receives.
import { Sandbox } from "@vercel/sandbox";
import type { WorkerProfile } from "openclaw/plugin-sdk/plugin-entry";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type LocalSandboxApi, startLocalSandboxApi } from "../../src/emulator/index.js";
import { profileKeyOf } from "../../src/preparation/key.js";
import { ImageStore } from "../../src/preparation/store.js";
import { sandboxNameOf, TAG_SCOPE } from "../../src/provider/allocation.js";
import { createVercelSandboxProvider } from "../../src/provider/index.js";
import { LeaseLedger } from "../../src/provider/ledger.js";
import { parseSettings } from "../../src/settings/profile.js";
import { imageRecord } from "../preparation/records.js";
import { recordingLogger, tempStateDirs } from "../support/state-files.js";

const SCOPE = "maintain-spec";
const ORPHAN = `vsb_${"7".repeat(24)}`;
const DAY_MS = 86_400_000;

let api: LocalSandboxApi;
const stateDirs = tempStateDirs("vsb-maintain");
const connection = () => ({ ...api.credentials, fetch: api.fetch });

beforeAll(async () => {
  api = await startLocalSandboxApi();
});
afterAll(async () => {
  await api?.close();
});

/** A snapshot on the emulator, recorded as a warm image of `settings` last used long ago. */
async function expiredImage(stateDir: string, profile: WorkerProfile): Promise<string> {
  const source = await Sandbox.create({ ...connection(), name: "image-source", runtime: "node24" });
  const { snapshotId } = await source.snapshot();
  const settings = parseSettings(profile);
  await ImageStore.inDirectory(stateDir).recordImage(
    imageRecord(snapshotId, { profileKey: profileKeyOf(settings, settings.vcpus), createdAt: 1, lastUsedAt: 1 }),
  );
  return snapshotId;
}

describe("maintenance across profiles", () => {
  it("a profile with bad settings is reported, and the next profile's orphan and expired image are still released", async () => {
    const stateDir = await stateDirs();
    const valid: WorkerProfile = {
      apiUrl: api.url,
      tokenEnv: "MAINTAIN_TOKEN",
      teamId: api.credentials.teamId,
      projectId: api.credentials.projectId,
      scope: SCOPE,
      images: { unusedFor: "1d" },
    };
    const invalid: WorkerProfile = { ...valid, vcpus: 3 };
    await Sandbox.create({
      ...connection(),
      name: sandboxNameOf(ORPHAN),
      runtime: "node24",
      tags: { [TAG_SCOPE]: SCOPE },
    });
    await LeaseLedger.inDirectory(stateDir).bury(ORPHAN, sandboxNameOf(ORPHAN), Date.now() - DAY_MS);
    const snapshotId = await expiredImage(stateDir, valid);
    const { warnings, logger } = recordingLogger();
    const provider = createVercelSandboxProvider({ env: { MAINTAIN_TOKEN: api.credentials.token }, logger, stateDir });
    try {
      const error = await provider
        .maintain?.({ profiles: [invalid, valid], signal: new AbortController().signal, assertCurrent: () => {} })
        .then(
          () => undefined,
          (e: unknown) => e as Error,
        );
      expect(error?.message).toMatch(/profile 1 of 2\b.*`vcpus`/);
      expect(error?.message).not.toMatch(/profile 2 of 2/);
      expect(warnings.some((w) => /profile 1 of 2\b.*`vcpus`/.test(w))).toBe(true);
      await expect(Sandbox.get({ ...connection(), name: sandboxNameOf(ORPHAN) })).rejects.toThrow(/404/);
      expect((await LeaseLedger.inDirectory(stateDir).tombstone(ORPHAN))?.provenAbsentAt).toBeGreaterThan(0);
      expect((await ImageStore.inDirectory(stateDir).images()).map((i) => i.snapshotId)).not.toContain(snapshotId);
    } finally {
      await provider.dispose();
    }
  });
});
