// `openclaw vercel-sandbox images warm` on the emulator, with the real SDK, the real bootstrap program and the
// real runtime archive helpers: it builds the base runtime image in a builder sandbox of its own and deletes the
// builder (also when interrupted); `images` lists the image as a base image; a new project's first worker then
// starts from it and runs no runtime install (the emulator's command log proves it); a second run builds
// nothing; an unknown profile is refused by name; no secret reaches argv, the progress, the report or the image.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Sandbox } from "@vercel/sandbox";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { renderImages } from "../../src/cli/images.js";
import { renderWarm, type WarmInput, warmBaseImage } from "../../src/cli/warm.js";
import { ImageStore } from "../../src/preparation/store.js";
import { sandboxNameOf } from "../../src/provider/allocation.js";
import { VercelClient } from "../../src/vercel/index.js";
import { createRepo, type loadCorePreparation, runtimePreparation, workerArchive } from "../preparation/fixtures.js";
import { startWarmHarness } from "../preparation/warm-harness.js";
import type { Artifact } from "../provider/fixtures/artifact.js";
import { type Harness, operationId } from "../provider/fixtures/enrollment-harness.js";

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

const store = () => ImageStore.inDirectory(stateDir);
const bases = async () => (await store().images()).filter((i) => i.kind === "base");
const secrets = () => [h.gateway.token, h.api.credentials.token];

/** How many times a run asked for core's runtime. */
let runtimeAsked = 0;

/** The command's input as the CLI builds it, on the harness's gateway config; `lines` collects the progress. */
function warmInput(lines: string[], extra: Partial<WarmInput> = {}): WarmInput {
  const source = runtimePreparation(h, runtime, worker);
  return {
    config: { cloudWorkers: { profiles: { spec: { provider: "vercel-sandbox", settings: h.profile } } } },
    pluginScope: "enrollment",
    stateDir,
    client: new VercelClient({ env: { ENROLL_TOKEN: h.api.credentials.token } }),
    runtime: async () => {
      runtimeAsked += 1;
      return source();
    },
    progress: (line) => lines.push(line),
    signal: new AbortController().signal,
    ...extra,
  };
}

async function sandboxGone(name: string): Promise<boolean> {
  return Sandbox.get({ ...h.api.credentials, fetch: h.api.fetch, name }).then(
    () => false,
    (error: unknown) => {
      if (/404/.test(String(error))) return true;
      throw error;
    },
  );
}

/** Runs `script` as root on a sandbox created from the snapshot, and returns its stdout. */
async function onImage(snapshotId: string, script: string, args: string[] = []): Promise<string> {
  const probe = await Sandbox.create({
    ...h.api.credentials,
    fetch: h.api.fetch,
    name: `image-probe-${Date.now()}-${Math.random().toString(16).slice(2, 8)}`,
    source: { type: "snapshot", snapshotId },
  });
  try {
    return await (await probe.runCommand({ cmd: "sh", args: ["-c", script, "sh", ...args], sudo: true })).stdout();
  } finally {
    await probe.delete();
  }
}

/** A new project's first worker, through the provider a gateway would run on the same state dir. */
async function newProject() {
  const repo = createRepo();
  repo.commit({ ".devcontainer.json": JSON.stringify({ updateContentCommand: "echo prepared >> $HOME/prep.log" }) });
  const on = h.provider({ stateDir });
  const op = operationId();
  const leaseId = (await on.resolveAllocation(h.profile, op)).leaseId;
  const preparation = await core.projectOf(repo);
  try {
    await on.provision(
      h.profile,
      op,
      h.options(
        leaseId,
        { artifact: runtime },
        { project: preparation.project, prepareNodeRuntime: runtimePreparation(h, runtime, worker) },
      ),
    );
    return leaseId;
  } finally {
    preparation.close();
  }
}

describe("images warm", () => {
  it("refuses an unknown profile by name, before asking for a runtime or creating anything", async () => {
    await expect(warmBaseImage(warmInput([], { profileId: "nope" }))).rejects.toThrow(
      /no cloudWorkers profile "nope" uses provider vercel-sandbox/,
    );
    expect(runtimeAsked).toBe(0);
    expect(h.api.commands()).toHaveLength(0);
  });

  it("interrupted (Ctrl-C), it deletes the builder and records no image", async () => {
    const abort = new AbortController();
    const lines: string[] = [];
    const input = warmInput(lines, { signal: abort.signal });
    input.progress = (line) => {
      lines.push(line);
      if (/^builder \S+ created/.test(line)) abort.abort(new Error("interrupted"));
    };
    await expect(warmBaseImage(input)).rejects.toThrow();
    const builder = /^builder (\S+) created/.exec(lines[0] ?? "")?.[1];
    expect(builder).toMatch(/^openclaw-/);
    expect(await sandboxGone(builder!)).toBe(true);
    expect(lines.at(-1)).toMatch(new RegExp(`^builder ${builder} deleted`));
    expect(await bases()).toHaveLength(0);
  }, 240_000);

  let built: Awaited<ReturnType<typeof warmBaseImage>>;
  const lines: string[] = [];

  it("builds the base image in a builder sandbox of its own, deletes the builder, and images lists it", async () => {
    built = await warmBaseImage(warmInput(lines));
    expect(built).toMatchObject({ profile: "spec", built: true });
    const [base] = await bases();
    expect(base).toMatchObject({ snapshotId: built.snapshotId, key: built.baseKey, projectKey: "", state: "ready" });
    // A progress line per phase as it ended, the builder's creation first and its deletion last.
    expect(lines.map((l) => l.replace(/[: ].*$/, ""))).toEqual([
      "builder",
      "runtime",
      "runtime",
      "base",
      "base",
      "builder",
    ]);
    expect(lines.slice(1, 5).map((l) => l.replace(/: .*$/, ""))).toEqual([
      "runtime install",
      "runtime measurement",
      "base scrub",
      "base capture",
    ]);
    expect(await sandboxGone(built.builder!)).toBe(true);
    expect(renderWarm(built)).toMatch(
      new RegExp(`^Built base image ${built.snapshotId} for profile spec in \\d+\\.\\d s`),
    );
    const listed = renderImages(
      { images: await store().images(), diagnostics: await store().diagnostics() },
      Date.now(),
    );
    expect(listed.split("\n").find((l) => l.startsWith(built.snapshotId))).toMatch(/\sbase\s/);
  }, 240_000);

  it("a new project's first worker starts from it and runs no runtime install", async () => {
    const leaseId = await newProject();
    const d = (await store().diagnostics()).find((x) => x.leaseId === leaseId);
    expect(d).toMatchObject({ start: "base", baseImageId: built.snapshotId, captured: true });
    // The emulator's command log: the enrollment is the only root program on this sandbox.
    const rootPrograms = h.api
      .commands()
      .filter((c) => c.sandboxName === sandboxNameOf(leaseId) && c.sudo && c.command === "node");
    expect(rootPrograms).toHaveLength(1);
    expect(await bases()).toHaveLength(1);
  }, 240_000);

  it("a second run builds nothing and says so", async () => {
    const commands = h.api.commands().length;
    const again = await warmBaseImage(warmInput([]));
    expect(again).toMatchObject({ built: false, snapshotId: built.snapshotId });
    expect(again.builder).toBeUndefined();
    expect(renderWarm(again)).toMatch(/is current: nothing was built/);
    expect(h.api.commands()).toHaveLength(commands);
    expect(await bases()).toHaveLength(1);
  }, 120_000);

  it("two runs at once capture one base image between them (the store's capture claim)", async () => {
    const fresh = workerArchive();
    h.gateway.serve(fresh);
    const before = (await bases()).length;
    const twice = await Promise.allSettled(
      [0, 1].map(() =>
        warmBaseImage({ ...warmInput([]), runtime: async () => runtimePreparation(h, runtime, fresh)() }),
      ),
    );
    const builtOnes = twice.filter((r) => r.status === "fulfilled" && r.value.built);
    expect(builtOnes).toHaveLength(1);
    // The other one either met the claim (refused, naming it) or found the image already captured.
    const other = twice.find((r) => !(r.status === "fulfilled" && r.value.built));
    if (other?.status === "rejected") expect(String(other.reason)).toMatch(/capturing the base image of this runtime/);
    else expect(other?.status === "fulfilled" && other.value.built).toBe(false);
    expect(await bases()).toHaveLength(before + 1);
  }, 240_000);

  it("no secret in the builder's argv, the progress, the report or the image", async () => {
    const builderArgv = h.api
      .commands()
      .filter((c) => c.sandboxName === built.builder)
      .map((c) => [c.command, ...c.args].join(" "));
    expect(builderArgv.length).toBeGreaterThan(0);
    const said = [...builderArgv, ...lines, JSON.stringify(built), renderWarm(built)].join("\n");
    for (const secret of secrets()) expect(said).not.toContain(secret);
    const found = await onImage(
      built.snapshotId,
      'for s in "$@"; do grep -rlF "$s" /home /tmp /vercel /etc /opt 2>/dev/null; done; echo done',
      secrets(),
    );
    expect(found).toBe("done\n");
  }, 240_000);
});
