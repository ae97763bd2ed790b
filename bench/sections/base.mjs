// A new project with the base runtime image present vs the cold path (issue 21): the same recipe as the warm
// section, OpenClaw's own project preparation and the real bootstrap against the stand-in gateway, whose
// runtime archive installs the real openclaw 2026.9.2 dependency tree (lib/runtime-archive.mjs). Each sample
// starts on an empty image store: the first new project is cold (runtime install, base image capture, recipe,
// project image capture), the second new project starts from the base image that one captured (no runtime
// install: the gateway's download count proves it). Wall time (median), the plugin's own requests (counted at
// its `fetch`; the first sample's pattern) and the runtime downloads of each.
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startEnrollmentGateway } from "../lib/enrollment-gateway.mjs";
import { makeProvider, operationId, profileOf, sandboxNameOfLease } from "../lib/provider.mjs";
import { runtimeArchive } from "../lib/runtime-archive.mjs";
import { preparationFixtures } from "../lib/specs.mjs";
import { countingFetch, quantile, round, tally } from "../lib/stats.mjs";
import { RECIPE } from "./warm.mjs";

export const GOAL = { ratio: 0.15, wallMs: 15_000 };

const say = (message) => process.stderr.write(`bench: ${message}\n`);

function diagnosticsOf(stateDir, leaseId) {
  const state = JSON.parse(readFileSync(join(stateDir, "vercel-sandbox", "images.json"), "utf8"));
  const found = state.diagnostics.find((d) => d.leaseId === leaseId);
  if (!found) throw new Error(`the provider recorded no preparation for ${leaseId}`);
  return found;
}

function figureOf(samples) {
  const wall = samples.map((s) => s.wallMs);
  return { ...samples[0], wallMs: round(quantile(wall, 0.5), 0), samplesMs: wall };
}

export async function baseVsCold(api, samples) {
  const { createRepo, loadCorePreparation } = await preparationFixtures();
  const core = await loadCorePreparation();
  const archive = runtimeArchive();
  const profile = profileOf(api);
  const plugin = countingFetch(api.fetch);
  const gateway = await startEnrollmentGateway({ ...api.credentials, fetch: api.fetch }, archive);
  const dirs = [];
  const repos = [];
  const colds = [];
  const bases = [];
  try {
    for (let i = 0; i < samples; i += 1) {
      const stateDir = mkdtempSync(join(tmpdir(), "bench-base-"));
      dirs.push(stateDir);
      const provider = makeProvider(api.credentials.token, {
        fetch: plugin.fetch,
        scope: "bench-base",
        stateDir,
        enrollment: { waitTimeoutMs: 300_000 },
        // BENCH_VERBOSE=1 prints the provider's progress (each phase with its duration) on stderr.
        ...(process.env.BENCH_VERBOSE ? { logger: { info: say, warn: say } } : {}),
      });
      const leases = [];
      const provision = async () => {
        const repo = createRepo(() => {});
        repos.push(repo);
        repo.commit({ ".devcontainer/devcontainer.json": JSON.stringify(RECIPE), "README.md": `bench ${i}\n` });
        const op = operationId();
        const { leaseId } = await provider.resolveAllocation(profile, op);
        leases.push(leaseId);
        const preparation = await core.projectOf({ root: repo.root }, "bench");
        const options = {
          ...gateway.options(sandboxNameOfLease(leaseId), leaseId),
          project: preparation.project,
          prepareNodeRuntime: gateway.prepareNodeRuntime,
        };
        const mark = plugin.mark();
        const downloads = gateway.downloads();
        const started = performance.now();
        try {
          await provider.provision(profile, op, options);
        } finally {
          preparation.close();
        }
        const wallMs = round(performance.now() - started, 0);
        const d = diagnosticsOf(stateDir, leaseId);
        return {
          start: d.start,
          event: d.event,
          captured: d.captured,
          baseImage: d.baseImageId ? (d.start === "cold" ? "captured" : "started from") : "none",
          runtimeDownloads: gateway.downloads() - downloads,
          wallMs,
          ...tally(plugin.since(mark)),
        };
      };
      try {
        colds.push(await provision());
        bases.push(await provision());
      } finally {
        for (const leaseId of leases) {
          await provider.destroy({ leaseId, profile }).catch((error) => {
            process.stderr.write(`bench: base vs cold: destroying ${leaseId} failed: ${error.message}\n`);
          });
        }
        await provider.dispose();
      }
    }
    const cold = figureOf(colds);
    const base = figureOf(bases);
    const ratio = { wall: round(base.wallMs / cold.wallMs, 3), requests: round(base.requests / cold.requests, 3) };
    return {
      recipe: RECIPE,
      runtime: { kind: archive.kind, dependencies: archive.dependencies, bytes: archive.bytes.length },
      goal: GOAL,
      samples,
      cold,
      base,
      ratio,
      met: base.wallMs <= GOAL.wallMs && ratio.wall <= GOAL.ratio,
    };
  } finally {
    await gateway.close();
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
    for (const repo of repos) rmSync(repo.root, { recursive: true, force: true });
  }
}
