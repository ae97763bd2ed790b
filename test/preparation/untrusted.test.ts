// Issue 25 on the emulator with the real provider and SDK: what the box says is never what decides an image.
// A replay that adopts a sandbox on which enrollment ran (or may have run) captures nothing, whatever the
// preparation record on the box claims; the store's recorded phase decides.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import type { WorkerProfile } from "openclaw/plugin-sdk/plugin-entry";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ImageStore } from "../../src/preparation/store.js";
import type { Artifact } from "../provider/fixtures/artifact.js";
import { type EnrollmentSpec, type Harness, operationId } from "../provider/fixtures/enrollment-harness.js";
import { createRepo, type loadCorePreparation, type Repo, runtimePreparation, startWarmHarness } from "./fixtures.js";

let h: Harness;
let runtime: Artifact;
let worker: Artifact;
let core: Awaited<ReturnType<typeof loadCorePreparation>>;
const stateDir = mkdtempSync(join(tmpdir(), "vsb-warm-state-"));

beforeAll(async () => {
  ({ h, runtime, worker, core } = await startWarmHarness());
}, 120_000);
afterAll(async () => {
  await h?.close();
  rmSync(stateDir, { recursive: true, force: true });
});

async function waitFor(condition: () => boolean) {
  for (let i = 0; i < 1200 && !condition(); i += 1) await sleep(50);
  if (!condition()) throw new Error("condition not met in 60 s");
}

interface Provision {
  repo: Repo;
  op?: string;
  profile?: WorkerProfile;
  spec?: Omit<EnrollmentSpec, "artifact">;
  on?: ReturnType<Harness["provider"]>;
}

async function provision({
  repo,
  op = operationId(),
  profile = h.profile,
  spec = {},
  on = h.provider({ stateDir }),
}: Provision) {
  const leaseId = (await on.resolveAllocation(profile, op)).leaseId;
  const preparation = await core.projectOf(repo);
  try {
    const lease = await on.provision(
      profile,
      op,
      h.options(
        leaseId,
        { artifact: runtime, ...spec },
        { project: preparation.project, prepareNodeRuntime: runtimePreparation(h, runtime, worker) },
      ),
    );
    return { lease, leaseId, op };
  } finally {
    preparation.close();
  }
}

const store = () => ImageStore.inDirectory(stateDir);
const runsOf = async (leaseId: string) =>
  (await store().diagnostics()).filter((d) => d.leaseId === leaseId).sort((a, b) => a.at - b.at);

describe("a replay never captures what enrollment or the agent touched", () => {
  it("an edited preparation record on a warm-started worker, a restart mid-enrollment, a replay: no new image", async () => {
    const repo = createRepo();
    repo.commit({ ".devcontainer.json": JSON.stringify({ updateContentCommand: "echo prepared >> $HOME/prep.log" }) });
    const cold = await provision({ repo });
    expect((await runsOf(cold.leaseId)).map((d) => d.captured)).toEqual([true]);
    const imagesBefore = (await store().images()).map((i) => i.snapshotId);

    // A warm-started worker whose gateway stops while it waits for the node.
    const shutdown = new AbortController();
    const op = operationId();
    const leaseId = (await h.provider({ stateDir }).resolveAllocation(h.profile, op)).leaseId;
    const first = provision({ repo, op, spec: { device: "never", signal: shutdown.signal } }).catch((e: unknown) => e);
    await waitFor(() => h.logs.some((l) => l.includes(`${leaseId}: bootstrap started node`)));
    // What the box says about its preparation is the box's to change: make it claim another recipe.
    await h.sh(
      leaseId,
      `for r in $HOME/.openclaw-worker/prepared/*/record.json; do echo '{"baseCommit":"0000000","identity":"edited"}' > "$r"; done`,
    );
    shutdown.abort(new Error("gateway is stopping"));
    expect(String(await first)).toContain("gateway is stopping");

    const replay = await provision({ repo, op, spec: { mode: "resume" } }).catch((e: unknown) => e);
    expect((await store().images()).map((i) => i.snapshotId)).toEqual(imagesBefore);
    expect((replay as Awaited<ReturnType<typeof provision>>).lease?.node?.deviceId).toMatch(/^device-/);
    const runs = await runsOf(leaseId);
    expect(runs.map((d) => [d.start, d.event, d.captured])).toEqual([
      ["warm", "unchanged", false],
      ["warm", "initial", false],
    ]);
    expect(runs[1]?.captureSkipped).toMatch(/enrollment/);
  }, 360_000);
});
