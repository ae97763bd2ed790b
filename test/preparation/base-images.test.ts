// Issue 21's base runtime images on the emulator, with the real provider, SDK, bootstrap and OpenClaw's own
// project preparation. The first cold worker captures the base image of its (runtime digests, shape) key right
// after the runtime install, before any recipe; a new project's first worker starts from it and installs no
// runtime (the emulator's command log and the gateway's downloads prove it), and so does a worker without a
// project; a changed runtime digest builds a new base image and never reuses the old one; concurrent cold
// workers capture one base image per key; no image holds a secret or anything an agent command wrote on a worker.
import { describe, expect, it } from "vitest";
import type { ProvisionOptions } from "../../src/infra/worker-types.js";
import { baseKeyOf } from "../../src/preparation/key.js";
import { sandboxNameOf } from "../../src/provider/allocation.js";
import { operationId } from "../provider/fixtures/enrollment-harness.js";
import { scanBox, WHOLE_DISK } from "../support/secret-scan.js";
import { createRepo, runtimePreparation, workerArchive } from "./fixtures.js";
import { useWarmWorld } from "./warm-harness.js";

const world = useWarmWorld();
const { stateDir, store, onImage, withImage, diagnosticsOf } = world;

const RECIPE = JSON.stringify({ updateContentCommand: "echo prepared >> $HOME/prep.log" });

/** A worker provisioned with the given worker archive (its digest is the runtime's), of `project` if given. */
async function newWorker(archive = world.worker, project?: ProvisionOptions["project"]) {
  const on = world.h.provider({ stateDir });
  const op = operationId();
  const leaseId = (await on.resolveAllocation(world.h.profile, op)).leaseId;
  const prepareNodeRuntime = runtimePreparation(world.h, world.runtime, archive);
  const lease = await on.provision(
    world.h.profile,
    op,
    world.h.options(leaseId, { artifact: world.runtime }, { ...(project ? { project } : {}), prepareNodeRuntime }),
  );
  return { lease, leaseId, destroy: () => on.destroy({ leaseId, profile: world.h.profile }) };
}

/** A new project (its own repository), provisioned with the given worker archive. */
async function newProject(archive = world.worker) {
  const repo = createRepo();
  repo.commit({ ".devcontainer.json": RECIPE });
  const preparation = await world.core.projectOf(repo);
  try {
    return await newWorker(archive, preparation.project);
  } finally {
    preparation.close();
  }
}

const bases = async () => (await store().images()).filter((i) => i.kind === "base");
/** The programs run as root on the lease's sandbox: the runtime install and the secret-carrying enrollment. */
const rootPrograms = (leaseId: string) =>
  world.h.api.commands().filter((c) => c.sandboxName === sandboxNameOf(leaseId) && c.sudo && c.command === "node");
const runtimeDownloads = () => world.h.gateway.requests.filter((r) => r.path.endsWith(world.runtime.sha256)).length;

describe("base runtime images", () => {
  let first: Awaited<ReturnType<typeof newProject>>;

  it("the first cold worker captures the base image before its recipe, then its project image on top", async () => {
    first = await newProject();
    const d = await diagnosticsOf(first.leaseId);
    expect(d).toMatchObject({ start: "cold", captured: true });
    const [base] = await bases();
    expect(d?.baseImageId).toBe(base?.snapshotId);
    expect(base).toMatchObject({ sourceLeaseId: first.leaseId, projectKey: "", baseCommit: "" });
    // It keeps its runtime's identity, digests and names only (no URL, no bearer token), which gives back its key.
    expect(baseKeyOf(base!.profileKey, base!.runtimeIdentity!)).toBe(base!.key);
    expect(Object.keys(base!.runtimeIdentity!.nodeBootstrap).sort()).toEqual([
      "enabledPluginIds",
      "openclawVersion",
      "sha256",
    ]);
    expect(Object.keys(base!.runtimeIdentity!.workerBundle).sort()).toEqual(["packageRelativePath", "sha256"]);
    expect(JSON.stringify(base!.runtimeIdentity)).not.toMatch(/https?:|token|bearer/i);
    expect((await store().images()).find((i) => i.snapshotId === d?.imageId)?.baseImage).toBe(base?.snapshotId);
    // Cold: the runtime install and the enrollment, each one root program.
    expect(rootPrograms(first.leaseId)).toHaveLength(2);
    // Every phase was logged with its duration as it ended, in the order they ran.
    const at = (pattern: string) =>
      world.h.logs.findIndex((l) => new RegExp(`^vercel-sandbox ${first.leaseId}: ${pattern}$`).test(l));
    const order = [
      "phase allocate done in \\d+ ms",
      "phase create or adopt done in \\d+ ms",
      "runtime install \\d+ ms",
      "base capture \\d+ ms",
      "seed \\d+ ms",
      "recipe \\d+ ms",
      "capture \\d+ ms",
      "phase preparation done in \\d+ ms",
      "phase enrollment done in \\d+ ms",
    ].map(at);
    expect(order).not.toContain(-1);
    expect(order).toEqual([...order].sort((a, b) => a - b));
    // Nothing of the project is in the base image: no checkout, no seed, no recipe output; the runtime is.
    const listing = await onImage(
      base!.snapshotId,
      "cd /home/vercel-sandbox && for p in prep.log .openclaw-worker/prepared .openclaw-worker/git-seeds .openclaw-worker/node-runtimes; do if [ -e $p ]; then echo present $p; else echo absent $p; fi; done",
    );
    expect(listing).toBe(
      "absent prep.log\nabsent .openclaw-worker/prepared\nabsent .openclaw-worker/git-seeds\npresent .openclaw-worker/node-runtimes\n",
    );
  }, 240_000);

  it("a new project's first worker starts from the base image and installs no runtime", async () => {
    const downloads = runtimeDownloads();
    const next = await newProject();
    const d = await diagnosticsOf(next.leaseId);
    expect(d).toMatchObject({ start: "base", event: "initial", captured: true });
    expect(d?.baseImageId).toBe((await bases())[0]?.snapshotId);
    expect(next.lease.node?.deviceId).toMatch(/^device-/);
    // The emulator's command log: enrollment is the only root program on this sandbox (no runtime install),
    // and the gateway served no runtime download to it.
    expect(rootPrograms(next.leaseId)).toHaveLength(1);
    expect(runtimeDownloads()).toBe(downloads);
    expect(world.h.logs.some((l) => l.includes(`${next.leaseId}: bootstrap download `))).toBe(false);
    expect(await bases()).toHaveLength(1);
  }, 240_000);

  it("a worker without a project starts from the base image too, installs no runtime, and holds it while it lives", async () => {
    const downloads = runtimeDownloads();
    const [base] = await bases();
    const { lease, leaseId, destroy } = await newWorker();
    expect(lease.node?.deviceId).toMatch(/^device-/);
    // Enrollment is the only root program (no runtime install) and the gateway served no runtime download.
    expect(rootPrograms(leaseId)).toHaveLength(1);
    expect(runtimeDownloads()).toBe(downloads);
    expect(world.h.logs).toContain(
      `vercel-sandbox ${leaseId}: started from base image ${base?.snapshotId}; enrollment reuses its runtime`,
    );
    // Its start is recorded (a replay follows it) and keeps retention off the image until the worker goes.
    expect((await store().choiceFor(leaseId))?.choice).toEqual({ kind: "image", snapshotId: base?.snapshotId });
    await destroy();
    expect(await store().choiceFor(leaseId)).toBeUndefined();
    expect(await bases()).toHaveLength(1);
  }, 240_000);

  it("no image holds a secret, or a file an agent command wrote on a worker", async () => {
    // What an agent on the enrolled workers leaves, as the account and with sudo.
    await world.h.sh(
      first.leaseId,
      "echo agent-was-here > $HOME/agent-note; mkdir -p $HOME/.openclaw-worker && echo x > $HOME/.openclaw-worker/agent-note",
    );
    await world.h.sh(first.leaseId, "echo agent-was-here > /etc/agent-note", true);
    // Later captures: a new project's image on the base, and (below) a new base.
    const later = await newProject();
    expect((await diagnosticsOf(later.leaseId))?.captured).toBe(true);
    const secrets = [world.h.gateway.token, ...world.h.setupCodes, world.h.api.credentials.token];
    const needles = {
      ...Object.fromEntries(secrets.map((s, i) => [`secret #${i + 1}`, s])),
      "the agent's note": "agent-was-here",
    };
    const images = await store().images();
    expect(images.length).toBeGreaterThan(2);
    for (const image of images) {
      // The whole disk by the one secret scan (its canary found, no read error hidden), then the agent's files by
      // name, whatever they hold (find's errors and exit code kept).
      const found = await withImage(image.snapshotId, async (box) => {
        const report = await scanBox(box, { ...WHOLE_DISK, needles });
        const byName = await box.runCommand({
          cmd: "find",
          args: ["/", "-xdev", "-path", "/proc", "-prune", "-o", "-name", "agent-note", "-print"],
          sudo: true,
        });
        const hits = Object.entries(report.hits).filter(([, files]) => files.length > 0);
        return {
          hits,
          filesRead: report.filesRead > 20,
          byName: [byName.exitCode, await byName.stdout(), await byName.stderr()],
        };
      });
      expect([image.kind ?? "project", found]).toEqual([
        image.kind ?? "project",
        { hits: [], filesRead: true, byName: [0, "", ""] },
      ]);
    }
  }, 360_000);

  it("a changed runtime digest builds a new base image and never reuses the old one", async () => {
    const old = (await bases())[0]!;
    const upgraded = workerArchive();
    world.h.gateway.serve(upgraded);
    const afterUpgrade = await newProject(upgraded);
    const d = await diagnosticsOf(afterUpgrade.leaseId);
    expect(d?.start).toBe("cold");
    expect(d?.baseImageId).not.toBe(old.snapshotId);
    const now = await bases();
    expect(now.map((b) => b.snapshotId).sort()).toEqual([old.snapshotId, d?.baseImageId].sort());
    expect(now.find((b) => b.snapshotId === d?.baseImageId)?.key).not.toBe(old.key);
    // The next new project on the new runtime starts from the new base; one on the old runtime, from the old.
    const onNew = await diagnosticsOf((await newProject(upgraded)).leaseId);
    expect(onNew).toMatchObject({ start: "base", baseImageId: d?.baseImageId });
    const onOld = await diagnosticsOf((await newProject()).leaseId);
    expect(onOld).toMatchObject({ start: "base", baseImageId: old.snapshotId });
  }, 480_000);

  it("concurrent cold workers of one new key capture one base image between them", async () => {
    const fresh = workerArchive();
    world.h.gateway.serve(fresh);
    const before = new Set((await bases()).map((b) => b.snapshotId));
    const leases = await Promise.all([newProject(fresh), newProject(fresh), newProject(fresh)]);
    const runs = await Promise.all(leases.map(({ leaseId }) => diagnosticsOf(leaseId)));
    const added = (await bases()).filter((b) => !before.has(b.snapshotId));
    expect(added).toHaveLength(1);
    for (const lease of leases) expect(lease.lease.node?.deviceId).toMatch(/^device-/);
    // Each worker either captured it, started from it, or was cold while another held the capture.
    for (const run of runs) {
      const how = run?.start === "cold" && run.baseImageId ? "captured" : (run?.baseCaptureSkipped ?? run?.start);
      expect([
        "captured",
        "base",
        "another worker is capturing the base image of this key",
        "a base image of this key exists",
      ]).toContain(how);
    }
    expect(runs.filter((r) => r?.start === "cold" && r.baseImageId)).toHaveLength(1);
  }, 480_000);
});
