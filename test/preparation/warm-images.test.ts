// Issue 10's acceptance on the emulator: real repositories (git init, commits, devcontainer files), OpenClaw's
// own project preparation, the real provider and SDK. The first provision is cold and captures the base
// runtime image and then its project image, the second starts from the project image and runs no preparation
// command (the emulator's command log proves it), a new commit's worker starts from the clean base (never the
// older project image), runs its whole recipe and captures its own image, a failed detected install skips
// capture and the worker still starts, a failed declared recipe fails the dispatch after releasing the
// sandbox, and the image holds no identity, session state, history or secret.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Sandbox, Snapshot } from "@vercel/sandbox";
import type { WorkerProfile } from "openclaw/plugin-sdk/plugin-entry";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ImageStore } from "../../src/preparation/store.js";
import { sandboxNameOf } from "../../src/provider/allocation.js";
import type { Artifact } from "../provider/fixtures/artifact.js";
import { type Harness, operationId } from "../provider/fixtures/enrollment-harness.js";
import { createRepo, type loadCorePreparation, type Repo, runtimePreparation } from "./fixtures.js";
import { startWarmHarness } from "./warm-harness.js";

let h: Harness;
let runtime: Artifact;
let worker: Artifact;
let core: Awaited<ReturnType<typeof loadCorePreparation>>;
const stateDir = mkdtempSync(join(tmpdir(), "vsb-warm-state-"));
let provider: ReturnType<Harness["provider"]>;
let profile: WorkerProfile;
const provisioned: string[] = [];

const RECIPE = JSON.stringify({
  // Comments and trailing commas are fine: the engine reads JSONC.
  onCreateCommand:
    "echo created >> $HOME/prep.log && mkdir -p $HOME/.openclaw/cloud-workers/planted $HOME/.openclaw-worker/workspaces/s1 $HOME/.npm/_cacache && echo device-token-planted > $HOME/.openclaw/cloud-workers/planted/device-token && echo history-planted > $HOME/.bash_history && echo cached > $HOME/.npm/_cacache/entry && echo workspace > $HOME/.openclaw-worker/workspaces/s1/file",
  updateContentCommand: ["sh", "-c", 'echo "updated $(git rev-parse --short HEAD)" >> "$HOME/prep.log"'],
  postCreateCommand: "echo post-create >> $HOME/post.log",
  postStartCommand: { started: "echo post-start >> $HOME/post.log" },
  remoteEnv: { RECIPE_FLAVOUR: "warm-spec" },
  image: "mcr.microsoft.com/devcontainers/base",
});

beforeAll(async () => {
  ({ h, runtime, worker, core } = await startWarmHarness());
  provider = h.provider({ stateDir });
  profile = { ...h.profile };
}, 120_000);
afterAll(async () => {
  await h?.close();
  rmSync(stateDir, { recursive: true, force: true });
});

async function provision(repo: Repo, op = operationId(), on = provider) {
  const leaseId = (await on.resolveAllocation(profile, op)).leaseId;
  const preparation = await core.projectOf(repo);
  try {
    const lease = await on.provision(
      profile,
      op,
      h.options(
        leaseId,
        { artifact: runtime },
        { project: preparation.project, prepareNodeRuntime: runtimePreparation(h, runtime, worker) },
      ),
    );
    provisioned.push(leaseId);
    return { lease, leaseId, op };
  } finally {
    preparation.close();
  }
}

const store = () => ImageStore.inDirectory(stateDir);
const diagnosticsOf = async (leaseId: string) => (await store().diagnostics()).find((d) => d.leaseId === leaseId);
const commandsOn = (leaseId: string) => h.api.commands().filter((c) => c.sandboxName === sandboxNameOf(leaseId));
const ran = (leaseId: string, text: string) =>
  commandsOn(leaseId).some((c) => [c.command, ...c.args].join(" ").includes(text));

describe("warm images", () => {
  const repo = createRepo();
  let cold: Awaited<ReturnType<typeof provision>>;
  let firstCommit = "";

  it("a first provision is cold: it prepares the checkout, captures an image, and the worker starts from it", async () => {
    firstCommit = repo.commit({ ".devcontainer/devcontainer.json": RECIPE, "README.md": "one\n" });
    cold = await provision(repo);
    expect(cold.lease.node?.deviceId).toMatch(/^device-/);
    const diagnostics = await diagnosticsOf(cold.leaseId);
    expect(diagnostics).toMatchObject({
      start: "cold",
      seedCacheHit: false,
      event: "initial",
      captured: true,
      baseCommit: firstCommit,
      recipe: { source: "devcontainer", file: ".devcontainer/devcontainer.json" },
    });
    expect(diagnostics?.recipe.ignoredNote).toContain("image");
    expect(diagnostics?.phases.map((p) => [p.phase, p.ok])).toEqual([
      ["onCreateCommand", true],
      ["updateContentCommand", true],
    ]);
    const images = await store().images();
    expect(images.map((i) => [i.kind ?? "project", i.snapshotId]).sort()).toEqual(
      [
        ["base", diagnostics?.baseImageId],
        ["project", diagnostics?.imageId],
      ].sort(),
    );
    const project = images.find((i) => i.snapshotId === diagnostics?.imageId);
    expect(project).toMatchObject({ baseCommit: firstCommit, sourceLeaseId: cold.leaseId, state: "ready" });
    expect(project?.baseImage).toBe(diagnostics?.baseImageId);
    // The worker continues from the image: the preparation's results and the post-binding phases are there.
    expect(h.logs).toContainEqual(
      expect.stringMatching(
        new RegExp(
          `${cold.leaseId}: preparation cold initial, recipe devcontainer; onCreateCommand ok \\d+ ms, updateContentCommand ok \\d+ ms; captured image ${diagnostics?.imageId}`,
        ),
      ),
    );
    const out = await h.sh(cold.leaseId, "cat $HOME/prep.log $HOME/post.log");
    expect(out).toBe(`created\nupdated ${firstCommit.slice(0, 7)}\npost-create\npost-start\n`);
  }, 240_000);

  it("the image holds no identity, session state, history or secret, and keeps machine caches", async () => {
    const imageId = (await diagnosticsOf(cold.leaseId))?.imageId as string;
    const probe = await Sandbox.create({
      ...h.api.credentials,
      fetch: h.api.fetch,
      name: `scrub-probe-${Date.now()}`,
      source: { type: "snapshot", snapshotId: imageId },
    });
    try {
      const listing = await probe.runCommand({
        cmd: "sh",
        args: [
          "-c",
          "cd $HOME && for p in .openclaw .openclaw-worker/workspaces .bash_history /tmp/openclaw-vercel-sandbox .npm/_cacache/entry .openclaw-worker/node-runtimes .openclaw-worker/git-seeds .openclaw-worker/prepared; do if [ -e $p ]; then echo present $p; else echo absent $p; fi; done; ls .openclaw-worker/node-runtimes/*/node_modules/openclaw/worker-archives",
        ],
      });
      const text = await listing.stdout();
      for (const gone of [
        ".openclaw",
        ".openclaw-worker/workspaces",
        ".bash_history",
        "/tmp/openclaw-vercel-sandbox",
      ]) {
        expect(text).toContain(`absent ${gone}\n`);
      }
      for (const kept of [".npm/_cacache/entry", ".openclaw-worker/node-runtimes", ".openclaw-worker/git-seeds"]) {
        expect(text).toContain(`present ${kept}\n`);
      }
      expect(text).toContain(`${worker.sha256}.tgz`);
      // No secret anywhere in the image's writable files.
      const secrets = [h.gateway.token, ...h.setupCodes, h.api.credentials.token];
      const grep = await probe.runCommand({
        cmd: "sh",
        args: [
          "-c",
          'for s in "$@"; do grep -rlF "$s" /home /tmp /vercel /etc 2>/dev/null; done; echo done',
          "sh",
          ...secrets,
        ],
        sudo: true,
      });
      expect(await grep.stdout()).toBe("done\n");
    } finally {
      await probe.delete();
    }
  }, 120_000);

  it("a second provision starts warm from the image and runs no preparation command", async () => {
    const warm = await provision(repo);
    const diagnostics = await diagnosticsOf(warm.leaseId);
    expect(diagnostics).toMatchObject({
      start: "warm",
      seedCacheHit: true,
      event: "unchanged",
      captured: false,
      phases: [],
    });
    expect(diagnostics?.imageId).toBe((await diagnosticsOf(cold.leaseId))?.imageId);
    expect(ran(warm.leaseId, "echo created")).toBe(false);
    expect(ran(warm.leaseId, "updated $(git rev-parse")).toBe(false);
    // The post-binding phases are per worker: they run on the warm one too.
    expect(ran(warm.leaseId, "echo post-create")).toBe(true);
    expect(await h.sh(warm.leaseId, "cat $HOME/prep.log")).toBe(`created\nupdated ${firstCommit.slice(0, 7)}\n`);
    // The node runtime came with the image: the warm worker downloaded nothing but what enrollment needs.
    expect(h.logs.some((l) => l.includes(`${warm.leaseId}: bootstrap download `))).toBe(false);
  }, 240_000);

  it("a new commit's worker starts from the clean base, never the older project image, and captures its own", async () => {
    const second = repo.commit({ "README.md": "two\n" });
    const next = await provision(repo);
    const diagnostics = await diagnosticsOf(next.leaseId);
    const base = (await diagnosticsOf(cold.leaseId))?.baseImageId;
    expect(diagnostics).toMatchObject({ start: "base", event: "initial", captured: true, baseCommit: second });
    expect(diagnostics?.baseImageId).toBe(base);
    expect(diagnostics?.phases.map((p) => p.phase)).toEqual(["onCreateCommand", "updateContentCommand"]);
    // Nothing the first commit's recipe left is on this worker: its log holds this commit's run alone.
    expect(await h.sh(next.leaseId, "cat $HOME/prep.log")).toBe(`created\nupdated ${second.slice(0, 7)}\n`);
    const images = (await store().images()).filter((i) => i.kind !== "base");
    expect(images.map((i) => i.baseCommit)).toEqual([second, firstCommit]);
    expect(images[0]?.baseImage).toBe(base);
    // The next worker of that commit starts from its image; one of the first commit still from the first image.
    const after = await provision(repo);
    expect((await diagnosticsOf(after.leaseId))?.imageId).toBe(images[0]?.snapshotId);
  }, 360_000);

  it("destroying leases keeps their images; maintenance then keeps the newest per key and proves the rest gone", async () => {
    const key = (await diagnosticsOf(cold.leaseId))?.key;
    const before = (await store().images()).filter((i) => i.key === key).map((i) => i.snapshotId);
    const base = (await diagnosticsOf(cold.leaseId))?.baseImageId as string;
    expect(before).toHaveLength(2);
    for (const leaseId of new Set(provisioned)) await provider.destroy({ leaseId, profile });
    const snapshotState = async (snapshotId: string) =>
      Snapshot.get({ ...h.api.credentials, fetch: h.api.fetch, snapshotId }).then(
        (snapshot) => snapshot.status,
        () => "absent",
      );
    // Release deleted the lease sandboxes but not the images they captured or started from.
    for (const id of before) expect(await snapshotState(id)).toBe("created");
    const controller = new AbortController();
    await provider.maintain?.({
      profiles: [{ ...profile, images: { keep: 1 } }],
      signal: controller.signal,
      assertCurrent: () => undefined,
    });
    const after = (await store().images()).filter((i) => i.key === key).map((i) => i.snapshotId);
    expect(after).toEqual([before[0]]);
    expect(await snapshotState(before[0] as string)).toBe("created");
    expect(["absent", "deleted"]).toContain(await snapshotState(before[1] as string));
    // The base image the kept project image was built on stays (retention never deletes what one depends on).
    expect(await snapshotState(base)).toBe("created");
    expect((await store().images()).map((i) => i.snapshotId)).toContain(base);
  }, 240_000);

  it("a replay keeps its recorded start even when an image appeared meanwhile", async () => {
    const fresh = createRepo();
    fresh.commit({ ".devcontainer.json": JSON.stringify({ updateContentCommand: "echo ok" }) });
    const first = await provision(fresh);
    // A restarted gateway (a new provider on the same state) replays the operation. Its sandbox stopped
    // meanwhile, so the replay is no adoption of a running node: it resumes the sandbox (a non-persistent one
    // comes back with a clean filesystem) and prepares again from scratch, and its choice stays the base image.
    await (await Sandbox.get({ ...h.api.credentials, fetch: h.api.fetch, name: sandboxNameOf(first.leaseId) })).stop();
    const restarted = h.provider({ stateDir });
    await provision(fresh, first.op, restarted);
    const runs = (await store().diagnostics()).filter((d) => d.leaseId === first.leaseId);
    expect(runs.map((d) => [d.start, d.event])).toEqual([
      ["base", "initial"],
      ["base", "initial"],
    ]);
    expect((await store().choiceFor(first.leaseId))?.choice).toEqual({
      kind: "image",
      snapshotId: (await diagnosticsOf(cold.leaseId))?.baseImageId,
    });
    expect((await store().images()).filter((i) => i.sourceLeaseId === first.leaseId)).toHaveLength(1);
  }, 360_000);
});

describe("other recipes and failures", () => {
  it("an executable fallback script is the recipe when no devcontainer file exists; a non-executable one is not", async () => {
    const repo = createRepo();
    const script = '#!/bin/sh\necho "script ran in $(pwd)" >> "$HOME/script.log"\n';
    repo.commit({ ".openclaw/worktree-setup.sh": script }, { executable: [".openclaw/worktree-setup.sh"] });
    const run = await provision(repo);
    const diagnostics = await diagnosticsOf(run.leaseId);
    expect(diagnostics).toMatchObject({ recipe: { source: "script", file: ".openclaw/worktree-setup.sh" } });
    expect(diagnostics?.phases.map((p) => [p.phase, p.ok])).toEqual([["updateContentCommand", true]]);
    expect(await h.sh(run.leaseId, "cat $HOME/script.log")).toMatch(
      /^script ran in \/home\/vercel-sandbox\/\.openclaw-worker\/prepared\/[0-9a-f]{16}\/checkout\n$/,
    );

    const plain = createRepo();
    plain.commit({ ".openclaw/worktree-setup.sh": script });
    const other = await provision(plain);
    expect((await diagnosticsOf(other.leaseId))?.recipe.source).toBe("none");
    expect(await h.sh(other.leaseId, "cat $HOME/script.log 2>/dev/null || echo none")).toBe("none\n");
  }, 240_000);

  it("a failed detected install is recorded, skips capture, and the worker still starts", async () => {
    const repo = createRepo();
    repo.commit({
      "package.json": JSON.stringify({ name: "drift", version: "1.0.0", dependencies: { "left-pad": "1.3.0" } }),
      "package-lock.json": JSON.stringify({ name: "drift", version: "1.0.0", lockfileVersion: 3, packages: {} }),
    });
    const before = (await store().images()).length;
    const started = await provision(repo);
    expect(started.lease.node?.deviceId).toMatch(/^device-/);
    const diagnostics = await diagnosticsOf(started.leaseId);
    expect(diagnostics).toMatchObject({ recipe: { source: "detected" }, captured: false });
    expect(diagnostics?.failure?.phase).toBe("updateContentCommand");
    expect(diagnostics?.failure?.outputTail).toMatch(/npm/);
    expect(diagnostics?.captureSkipped).toMatch(/detected/);
    expect((await store().images()).length).toBe(before);
  }, 240_000);

  it("a failed declared command fails the dispatch with its output, after releasing the sandbox", async () => {
    const repo = createRepo();
    repo.commit({
      ".devcontainer/devcontainer.json": JSON.stringify({ onCreateCommand: "echo boom-output-$((6*7)); exit 3" }),
    });
    const op = operationId();
    const leaseId = (await provider.resolveAllocation(profile, op)).leaseId;
    const error = await provision(repo, op).then(
      () => undefined,
      (e: unknown) => e as Error,
    );
    expect(error?.name).toBe("WorkerProviderError");
    expect(error?.message).toContain("onCreateCommand");
    expect(error?.message).toContain("boom-output-42");
    expect(await h.sandboxExists(leaseId)).toBe(false);
  }, 240_000);
});
