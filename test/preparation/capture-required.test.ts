// OpenClaw 2026.9.4+'s `captureRequired` (core's `prepare` ran new setup on the box, and "new completed setup
// must enter the reusable image before enrollment"), on the emulator with the real provider and OpenClaw's own
// project preparation: a warm start that core asks to capture captures on top of the image it started from
// (which it never does otherwise), and a box that cannot be captured fails the dispatch with the reason instead
// of enrolling a worker no image holds. Core's answer is its own `prepare`'s, with the field 2026.9.4 adds.
import { WorkerProviderError } from "openclaw/plugin-sdk/plugin-entry";
import { describe, expect, it } from "vitest";
import type { ProvisionOptions } from "../../src/infra/worker-types.js";
import { operationId } from "../provider/fixtures/enrollment-harness.js";
import { createRepo, type Repo, runtimePreparation } from "./fixtures.js";
import { useWarmWorld } from "./warm-harness.js";

const world = useWarmWorld();
const { stateDir, store, diagnosticsOf } = world;

/** Provisions a lease of `repo`'s current commit; `required` adds 2026.9.4's `captureRequired` to core's answer. */
async function provision(repo: Repo, opts: { required: boolean; runtime?: boolean }) {
  const on = world.h.provider({ stateDir });
  const op = operationId();
  const leaseId = (await on.resolveAllocation(world.h.profile, op)).leaseId;
  const preparation = await world.core.projectOf(repo);
  const project: NonNullable<ProvisionOptions["project"]> = {
    ...preparation.project,
    prepare: async (transport) => ({
      ...(await preparation.project.prepare(transport)),
      ...(opts.required ? { captureRequired: true as const } : {}),
    }),
  };
  const extra: Partial<ProvisionOptions> = {
    project,
    ...(opts.runtime === false ? {} : { prepareNodeRuntime: runtimePreparation(world.h, world.runtime, world.worker) }),
  };
  const result = on.provision(world.h.profile, op, world.h.options(leaseId, { artifact: world.runtime }, extra));
  return { leaseId, result: result.finally(() => preparation.close()) };
}

describe("captureRequired (OpenClaw 2026.9.4+)", () => {
  const repo = createRepo();
  repo.commit({ ".devcontainer.json": JSON.stringify({ updateContentCommand: "echo prepared >> $HOME/prep.log" }) });
  let firstImage: string | undefined;

  it("a warm start at the same commit captures a new image on top of its own when core requires it", async () => {
    const first = await provision(repo, { required: false });
    await first.result;
    const cold = await diagnosticsOf(first.leaseId);
    expect(cold).toMatchObject({ start: "cold", captured: true });
    firstImage = cold?.imageId;

    // Without the requirement a warm start never captures (the rule this requirement overrides).
    const plain = await provision(repo, { required: false });
    await plain.result;
    expect(await diagnosticsOf(plain.leaseId)).toMatchObject({ start: "warm", imageId: firstImage, captured: false });

    const required = await provision(repo, { required: true });
    await required.result;
    const d = await diagnosticsOf(required.leaseId);
    expect(d).toMatchObject({ start: "warm", captured: true });
    expect(d?.imageId).not.toBe(firstImage);
    const image = (await store().images()).find((i) => i.snapshotId === d?.imageId);
    // Built on the same clean base as the image it started from, from this lease's box.
    const parent = (await store().images()).find((i) => i.snapshotId === firstImage);
    expect(image).toMatchObject({ sourceLeaseId: required.leaseId, baseImage: parent?.baseImage, state: "ready" });
    expect(image?.baseImage).toEqual(expect.any(String));
  }, 480_000);

  it("a box that cannot be captured fails the dispatch with the reason, and its sandbox is released", async () => {
    const other = createRepo();
    other.commit({ "README.md": "no runtime\n" });
    const { leaseId, result } = await provision(other, { required: true, runtime: false });
    await expect(result).rejects.toThrow(
      /requires this worker's completed setup to be captured before enrollment, and it cannot be: the gateway offered no node runtime/,
    );
    // Permanent for core: a retry would meet the same box.
    await expect(result).rejects.toBeInstanceOf(WorkerProviderError);
    expect(await diagnosticsOf(leaseId)).toMatchObject({ captured: false, failure: { phase: "capture" } });
    expect(await world.h.sandboxExists(leaseId)).toBe(false);
  }, 240_000);
});
