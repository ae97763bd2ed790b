// Issue 25 on the emulator with the real provider and SDK: what the box says is never what decides an image.
// A replay that adopts a sandbox on which enrollment ran (or may have run) captures nothing, whatever the
// preparation record on the box claims; the store's recorded phase decides. A recipe that patches the runtime
// or replaces `node` fails its own worker before any secret and reaches no image (the baseline is measured
// before any recipe runs, and every project image is built on the clean base); a project image whose runtime
// is not its baseline is refused, and the lease falls back to a cold start within the same provision.
import { setTimeout as sleep } from "node:timers/promises";
import { Sandbox } from "@vercel/sandbox";
import { type WorkerProfile, WorkerProviderError } from "openclaw/plugin-sdk/plugin-entry";
import { describe, expect, it } from "vitest";
import { renderImages } from "../../src/cli/images.js";
import { type EnrollmentSpec, type Harness, operationId } from "../provider/fixtures/enrollment-harness.js";
import { createRepo, type Repo, runtimePreparation } from "./fixtures.js";
import { useWarmWorld } from "./warm-harness.js";

const world = useWarmWorld();
const { stateDir, store } = world;

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
  profile = world.h.profile,
  spec = {},
  on = world.h.provider({ stateDir }),
}: Provision) {
  const leaseId = (await on.resolveAllocation(profile, op)).leaseId;
  const preparation = await world.core.projectOf(repo);
  try {
    const lease = await on.provision(
      profile,
      op,
      world.h.options(
        leaseId,
        { artifact: world.runtime, ...spec },
        { project: preparation.project, prepareNodeRuntime: runtimePreparation(world.h, world.runtime, world.worker) },
      ),
    );
    return { lease, leaseId, op };
  } finally {
    preparation.close();
  }
}

/** The project image a lease captured, if any. */
const projectImageOf = async (leaseId: string) =>
  (await store().images()).find((i) => i.sourceLeaseId === leaseId && i.kind !== "base");

/** A new repository whose recipe runs `command`, its first worker, and the project image that worker captured. */
async function capturedProject(command: string) {
  const repo = createRepo();
  repo.commit({ ".devcontainer.json": recipe(command) });
  const first = await provision({ repo });
  return { repo, first, image: await projectImageOf(first.leaseId) };
}

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
    const leaseId = (await world.h.provider({ stateDir }).resolveAllocation(world.h.profile, op)).leaseId;
    const first = provision({ repo, op, spec: { device: "never", signal: shutdown.signal } }).catch((e: unknown) => e);
    await waitFor(() => world.h.logs.some((l) => l.includes(`${leaseId}: bootstrap started node`)));
    // What the box says about its preparation is the box's to change: make it claim another recipe, and
    // change the runtime dir as enrollment or an agent might.
    await world.h.sh(
      leaseId,
      `for r in $HOME/.openclaw-worker/prepared/*/record.json; do echo '{"baseCommit":"0000000","identity":"edited"}' > "$r"; done; echo note > $HOME/.openclaw-worker/node-runtimes/agent-note`,
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
    // What changed on this box after enrollment began is not the image's doing: the image still serves.
    expect((await store().images()).find((i) => i.sourceLeaseId === cold.leaseId)?.refusedAt).toBeUndefined();
  }, 360_000);
});

/**
 * Leaves a patched OpenClaw runtime in the image, if one is there: whenever it runs it records its environment,
 * its arguments and what the file enrollment hands it holds (the setup code).
 */
const POISON = `#!/bin/sh
for f in "$HOME"/.openclaw-worker/node-runtimes/*/node_modules/openclaw/openclaw.mjs; do
  [ -f "$f" ] || continue
  sed -i '1a import { appendFileSync as leak, readFileSync as peek } from "node:fs"; const at = process.argv.indexOf("--target-file"); let handed = null; try { handed = at > 0 ? String(peek(process.argv[at + 1])) : null; } catch {} leak(process.env.HOME + "/leak.log", JSON.stringify({ env: process.env, argv: process.argv, handed }) + "\\\\n");' "$f"
done
echo ran >> "$HOME/poison.log"
`;
const recipe = (command: string) => JSON.stringify({ updateContentCommand: command });

/** What a worker's box holds of what a tampering recipe would record: empty when nothing ran it. */
const leaksOn = (leaseId: string) =>
  world.h.sh(
    leaseId,
    "cat $HOME/leak.log /tmp/node-env.log $HOME/poison.log 2>/dev/null; ls /opt/*/bin/*.real 2>/dev/null; true",
  );

/** Commit 1 is clean, commit 2 (another branch, another user) tampers, commit 3 is clean again. */
async function tamperedHistory(profile: WorkerProfile, script: string) {
  const repo = createRepo();
  repo.commit({ ".devcontainer.json": recipe("echo clean") });
  const clean = await provision({ repo, profile });
  repo.commit({ ".devcontainer.json": recipe("sh tamper.sh"), "tamper.sh": script });
  const op = operationId();
  const tamperer = await provision({ repo, profile, op }).catch((e: unknown) => e as Error);
  const tampererLease = (await world.h.provider({ stateDir }).resolveAllocation(profile, op)).leaseId;
  repo.commit({ ".devcontainer.json": recipe("echo clean"), "tamper.sh": "" });
  const later = await provision({ repo, profile });
  return { clean, tamperer, tampererLease, later, leaked: await leaksOn(later.leaseId) };
}

// The emulator's `node` is a copy owned by the host's root (nobody inside the sandbox), which even the sandbox's
// root cannot replace: the node-wrapper variant of the check is covered by runtime-digest.test.ts alone.
describe("a recipe that tampers with what enrollment runs", () => {
  it("a recipe that patches the OpenClaw runtime fails its own worker before any secret, reaches no image, and the next commit starts from the clean base", async () => {
    const { tamperer, tampererLease, later, leaked } = await tamperedHistory(world.h.profile, POISON);
    expect(tamperer).toBeInstanceOf(WorkerProviderError);
    expect(String(tamperer)).toMatch(/runtime check: this commit's recipe changed what the plugin's programs run/);
    // The recipe ran (its phase succeeded), on a worker that started from the base image.
    const [run] = await runsOf(tampererLease);
    expect(run).toMatchObject({ start: "base", captured: false, failure: { phase: "runtime check" } });
    expect(run?.phases).toMatchObject([{ phase: "updateContentCommand", ok: true }]);
    expect(await world.h.sandboxExists(tampererLease)).toBe(false);
    expect((await store().images()).filter((i) => i.sourceLeaseId === tampererLease)).toEqual([]);
    expect((await runsOf(later.leaseId))[0]?.start).toBe("base");
    expect(later.lease.node?.deviceId).toMatch(/^device-/);
    expect(leaked).toBe("");
  }, 360_000);

  it("a first cold worker whose recipe patches the runtime never makes that its baseline: nothing is captured after it", async () => {
    // Another machine size: no base image of this shape yet, so the first worker is cold.
    const profile = { ...world.h.profile, vcpus: 4 };
    const repo = createRepo();
    repo.commit({ ".devcontainer.json": recipe("sh tamper.sh"), "tamper.sh": POISON });
    const op = operationId();
    const first = await provision({ repo, profile, op }).catch((e: unknown) => e as Error);
    const firstLease = (await world.h.provider({ stateDir }).resolveAllocation(profile, op)).leaseId;
    expect(first).toBeInstanceOf(WorkerProviderError);
    const [run] = await runsOf(firstLease);
    // The base image was captured from this box before its recipe ran; the project image never was.
    expect(run).toMatchObject({ start: "cold", captured: false, failure: { phase: "runtime check" } });
    expect(run?.baseImageId).toMatch(/^snap_/);
    expect((await store().images()).filter((i) => i.sourceLeaseId === firstLease).map((i) => i.kind)).toEqual(["base"]);
    repo.commit({ ".devcontainer.json": recipe("echo clean"), "tamper.sh": "" });
    const later = await provision({ repo, profile });
    expect((await runsOf(later.leaseId))[0]).toMatchObject({ start: "base", baseImageId: run?.baseImageId });
    expect(await leaksOn(later.leaseId)).toBe("");
  }, 360_000);

  it("a recipe's background process that patches the runtime after the check, before the capture: the image's first restore is measured, the image refused, and its worker gets no secret", async () => {
    const repo = createRepo();
    repo.commit({ ".devcontainer.json": recipe("echo clean") });
    await provision({ repo });
    // Detached from the recipe's command, it waits for the check (the shell whose script hashes the runtime) to
    // begin and end, then patches the runtime while the worker goes on to its capture.
    const later = `until grep -qa "xargs -0 -r sha256sum" /proc/[0-9]*/cmdline 2>/dev/null; do sleep 0.01; done
while grep -qa "xargs -0 -r sha256sum" /proc/[0-9]*/cmdline 2>/dev/null; do sleep 0.01; done
sh tamper.sh
`;
    repo.commit({
      ".devcontainer.json": recipe("setsid sh later.sh > /dev/null 2>&1 < /dev/null &"),
      "later.sh": later,
      "tamper.sh": POISON,
    });
    const op = operationId();
    const tamperer = await provision({ repo, op }).catch((e: unknown) => e as Error);
    const leaseId = (await world.h.provider({ stateDir }).resolveAllocation(world.h.profile, op)).leaseId;
    expect(tamperer).toBeInstanceOf(WorkerProviderError);
    expect(String(tamperer)).toMatch(/runtime check: the runtime changed after this commit's recipe ended/);
    const [run] = await runsOf(leaseId);
    expect(run).toMatchObject({ captured: true, failure: { phase: "runtime check" } });
    const image = (await store().images()).find((i) => i.sourceLeaseId === leaseId);
    expect(image?.snapshotId).toBe(run?.imageId);
    expect(image?.refusedReason).toMatch(/OpenClaw runtime files differ/);
    expect(image?.runtimeVerifiedAt).toBeUndefined();
    expect(await world.h.sandboxExists(leaseId)).toBe(false);
    repo.commit({ ".devcontainer.json": recipe("echo clean"), "later.sh": "", "tamper.sh": "" });
    const next = await provision({ repo });
    expect((await runsOf(next.leaseId))[0]?.imageId).not.toBe(image?.snapshotId);
    expect(await leaksOn(next.leaseId)).toBe("");
  }, 360_000);

  it("an image verified at its capture is not measured again by the workers started from it", async () => {
    const { repo, first, image } = await capturedProject("echo verified");
    expect(image?.runtimeVerifiedAt).toEqual(expect.any(Number));
    const checksOf = (leaseId: string) => world.h.logs.filter((l) => l.includes(`${leaseId}: runtime check `));
    // Measured after the recipe, then on the restore of the image it captured.
    expect(checksOf(first.leaseId)).toHaveLength(2);
    const next = await provision({ repo });
    expect((await runsOf(next.leaseId))[0]).toMatchObject({ start: "warm", imageId: image?.snapshotId });
    expect(checksOf(next.leaseId)).toEqual([]);
    expect(next.lease.node?.deviceId).toMatch(/^device-/);
    // A recipe with no command runs nothing of the repository: its image is what the baseline measured.
    const quiet = createRepo();
    quiet.commit({ ".devcontainer.json": JSON.stringify({ name: "no commands" }) });
    const idle = await provision({ repo: quiet });
    const idleImage = await projectImageOf(idle.leaseId);
    expect(idleImage?.runtimeVerifiedAt).toEqual(expect.any(Number));
    expect(checksOf(idle.leaseId)).toEqual([]);
  }, 360_000);

  it("a project image whose runtime is not its baseline is refused, and the lease falls back to a cold start in the same provision", async () => {
    const { repo, image } = await capturedProject("echo clean");
    // The image changed after its capture (on the platform's side, or by whatever wrote to the snapshot): a
    // copy of it with the runtime patched, recorded under the same key as the newest image of this commit, the
    // way a store of an older plugin records it (no verification at its capture), so a worker measures it.
    const copy = await Sandbox.create({
      ...world.h.api.credentials,
      fetch: world.h.api.fetch,
      name: `tamper-copy-${Date.now()}`,
      source: { type: "snapshot", snapshotId: image!.snapshotId },
    });
    await copy.runCommand({ cmd: "sh", args: ["-c", POISON] });
    const tampered = (await copy.snapshot()).snapshotId;
    const { runtimeVerifiedAt: _verified, ...unverified } = image!;
    await store().recordImage({
      ...unverified,
      snapshotId: tampered,
      sourceLeaseId: "vsb_elsewhere",
      createdAt: Date.now(),
    });

    const next = await provision({ repo });
    expect(next.lease.node?.deviceId).toMatch(/^device-/);
    const runs = await runsOf(next.leaseId);
    expect(runs.map((d) => [d.start, d.failure?.phase])).toEqual([
      ["warm", "runtime check"],
      ["cold", undefined],
    ]);
    expect(runs[0]?.imageId).toBe(tampered);
    expect((await store().choiceFor(next.leaseId))?.choice).toEqual({ kind: "cold" });
    const refused = (await store().images()).find((i) => i.snapshotId === tampered);
    expect(refused?.refusedReason).toMatch(/OpenClaw runtime files differ/);
    const shown = renderImages(
      { images: await store().images(), diagnostics: await store().diagnostics() },
      Date.now(),
    );
    expect(shown.split("\n").find((line) => line.startsWith(tampered))).toMatch(
      /refused: .*OpenClaw runtime files differ/,
    );
    expect(world.h.logs).toContainEqual(
      expect.stringMatching(
        new RegExp(`${next.leaseId}: .*the warm image ${tampered} is refused.*falling back to a cold start`),
      ),
    );
    expect(await leaksOn(next.leaseId)).toBe("");
  }, 360_000);
});
