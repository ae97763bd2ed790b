// Warm vs cold provision: a real Git repository whose devcontainer recipe's `onCreateCommand` sleeps 5 s,
// prepared by OpenClaw's own project preparation (loaded from the installed package) and the real bootstrap
// enroller against the stand-in gateway. The first provision of the project is cold (it prepares, installs the
// runtime and captures the image); the next one of the same project and commit starts from that image. Each of
// `pairs` fresh projects gives one cold and one warm sample: wall time (median over the pairs) and the plugin's
// own requests (counted at its `fetch`; the first pair's pattern), and the ratio warm / cold of the medians.
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startEnrollmentGateway } from "../lib/enrollment-gateway.mjs";
import { makeProvider, operationId, profileOf, sandboxNameOfLease } from "../lib/provider.mjs";
import { preparationFixtures } from "../lib/specs.mjs";
import { countingFetch, quantile, round, tally } from "../lib/stats.mjs";

export const RECIPE = { onCreateCommand: "sleep 5" };
export const GOAL = 0.1;

/** The provider's own record of a lease's preparation (images.json in its state dir). */
function diagnosticsOf(stateDir, leaseId) {
  const state = JSON.parse(readFileSync(join(stateDir, "vercel-sandbox", "images.json"), "utf8"));
  const found = state.diagnostics.find((d) => d.leaseId === leaseId);
  if (!found) throw new Error(`the provider recorded no preparation for ${leaseId}`);
  return found;
}

/** The first sample's counts and pattern, with the wall time of every sample and their median. */
function figureOf(samples) {
  const wall = samples.map((s) => s.wallMs);
  return { ...samples[0], wallMs: round(quantile(wall, 0.5), 0), samplesMs: wall };
}

export async function warmVsCold(api, pairs) {
  const { createRepo, loadCorePreparation } = await preparationFixtures();
  const core = await loadCorePreparation();
  const stateDir = mkdtempSync(join(tmpdir(), "bench-warm-"));
  const profile = profileOf(api);
  const plugin = countingFetch(api.fetch);
  const gateway = await startEnrollmentGateway({ ...api.credentials, fetch: api.fetch });
  const provider = makeProvider(api.credentials.token, {
    fetch: plugin.fetch,
    scope: "bench-warm",
    stateDir,
    enrollment: { waitTimeoutMs: 120_000 },
  });
  const leases = [];
  const repos = [];
  async function provision(repo) {
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
    const started = performance.now();
    try {
      await provider.provision(profile, op, options);
    } finally {
      preparation.close();
    }
    const wallMs = round(performance.now() - started, 0);
    const { start, event, captured, phases } = diagnosticsOf(stateDir, leaseId);
    return { start, event, captured, phases: phases.map((p) => p.phase), wallMs, ...tally(plugin.since(mark)) };
  }
  async function release() {
    for (const leaseId of leases.splice(0)) {
      await provider.destroy({ leaseId, profile }).catch((error) => {
        process.stderr.write(`bench: warm vs cold: destroying ${leaseId} failed: ${error.message}\n`);
      });
    }
  }
  try {
    const colds = [];
    const warms = [];
    for (let i = 0; i < pairs; i += 1) {
      const repo = createRepo(() => {}); // removed below, with the others
      repos.push(repo);
      repo.commit({ ".devcontainer/devcontainer.json": JSON.stringify(RECIPE), "README.md": `bench ${i}\n` });
      colds.push(await provision(repo));
      warms.push(await provision(repo));
      await release();
    }
    const cold = figureOf(colds);
    const warm = figureOf(warms);
    return {
      recipe: RECIPE,
      goal: GOAL,
      pairs,
      cold,
      warm,
      ratio: { wall: round(warm.wallMs / cold.wallMs, 3), requests: round(warm.requests / cold.requests, 3) },
    };
  } finally {
    await release();
    await provider.dispose();
    await gateway.close();
    rmSync(stateDir, { recursive: true, force: true });
    for (const repo of repos) rmSync(repo.root, { recursive: true, force: true });
  }
}
