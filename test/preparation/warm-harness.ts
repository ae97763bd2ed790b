// The world of the warm-preparation specs, apart from fixtures.ts so that the bench, which imports fixtures.ts
// outside vitest, never loads the emulator's TypeScript sources through it.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Sandbox } from "@vercel/sandbox";
import { afterAll, beforeAll } from "vitest";
import { ImageStore } from "../../src/preparation/store.js";
import { packFixture } from "../provider/fixtures/artifact.js";
import { startHarness } from "../provider/fixtures/enrollment-harness.js";
import { loadCorePreparation, workerArchive } from "./fixtures.js";

/** The enrollment harness with what a warm preparation also needs: a runtime, a worker archive, core's preparation. */
export async function startWarmHarness() {
  const h = await startHarness();
  const runtime = packFixture("2026.9.2");
  const worker = workerArchive();
  h.gateway.serve(runtime);
  h.gateway.serve(worker);
  return { h, runtime, worker, core: await loadCorePreparation() };
}

type WarmHarness = Awaited<ReturnType<typeof startWarmHarness>>;

/** A spec read the warm world at collection time, before its beforeAll started it. */
export class WarmWorldNotStartedError extends Error {
  constructor(part: string) {
    super(`the warm world's ${part} is read before beforeAll started it: read it inside a test or a hook`);
    this.name = "WarmWorldNotStartedError";
  }
}

/**
 * Registers, in the calling spec file, a beforeAll that starts the warm harness and an afterAll that closes it
 * and removes the plugin's state dir. What the harness starts is read through the getters, from tests and hooks;
 * the state dir and the image store over it are there at once, onImage probes a captured image.
 */
export function useWarmWorld() {
  const stateDir = mkdtempSync(join(tmpdir(), "vsb-warm-state-"));
  let started: WarmHarness | undefined;
  beforeAll(async () => {
    started = await startWarmHarness();
  }, 120_000);
  afterAll(async () => {
    await started?.h.close();
    rmSync(stateDir, { recursive: true, force: true });
  });
  const part = <K extends keyof WarmHarness>(key: K): WarmHarness[K] => {
    if (!started) throw new WarmWorldNotStartedError(key);
    return started[key];
  };
  const store = () => ImageStore.inDirectory(stateDir);
  /** Runs `use` on a sandbox created from the snapshot, deleted after. */
  const withImage = async <T>(snapshotId: string, use: (box: Sandbox) => Promise<T>): Promise<T> => {
    const { api } = part("h");
    const probe = await Sandbox.create({
      ...api.credentials,
      fetch: api.fetch,
      name: `image-probe-${Date.now()}-${Math.random().toString(16).slice(2, 8)}`,
      source: { type: "snapshot", snapshotId },
    });
    try {
      return await use(probe);
    } finally {
      await probe.delete();
    }
  };
  /** Runs `script` as root on a sandbox created from the snapshot, and returns its stdout. */
  const onImage = (snapshotId: string, script: string, args: string[] = []): Promise<string> =>
    withImage(snapshotId, async (probe) =>
      (await probe.runCommand({ cmd: "sh", args: ["-c", script, "sh", ...args], sudo: true })).stdout(),
    );
  return {
    stateDir,
    store,
    onImage,
    withImage,
    /** The plugin's diagnostics of one lease, as the state dir's store holds them. */
    diagnosticsOf: async (leaseId: string) => (await store().diagnostics()).find((d) => d.leaseId === leaseId),
    get h() {
      return part("h");
    },
    get runtime() {
      return part("runtime");
    },
    get worker() {
      return part("worker");
    },
    get core() {
      return part("core");
    },
  };
}
