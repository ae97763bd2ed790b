// Concurrency: N provisions of distinct operations at once (N sandboxes expected), and M provisions of one
// operation at once from four providers, as four gateway processes would (one sandbox expected). Sandboxes
// created = creates the emulator committed (200) in the window; latency is per provision; errors are counted.

import { makeProvider, operationId, profileOf, standInEnroller, standInOptions } from "../lib/provider.mjs";
import { isCreate, summary } from "../lib/stats.mjs";

async function wave(api, providers, ops) {
  const profile = profileOf(api);
  const from = api.requests().length;
  const latencies = [];
  const outcomes = await Promise.allSettled(
    ops.map(async (op, i) => {
      const started = performance.now();
      const lease = await providers[i % providers.length].provision(profile, op, standInOptions());
      latencies.push(performance.now() - started);
      return lease;
    }),
  );
  const sandboxesCreated = api
    .requests()
    .slice(from)
    .filter((r) => isCreate(r) && r.status === 200).length;
  const leases = new Set(outcomes.filter((o) => o.status === "fulfilled").map((o) => o.value.leaseId));
  for (const leaseId of leases) await providers[0].destroy({ leaseId, profile });
  return {
    provisions: ops.length,
    providers: providers.length,
    sandboxesCreated,
    leases: leases.size,
    errors: outcomes.filter((o) => o.status === "rejected").length,
    latencyMs: summary(latencies),
  };
}

export async function concurrency(api, { distinct, same }) {
  const make = () => makeProvider(api.credentials.token, { scope: "bench-concurrency", enroll: standInEnroller });
  const providers = [make(), make(), make(), make()];
  try {
    const one = operationId();
    return {
      distinct: await wave(api, [providers[0]], Array.from({ length: distinct }, operationId)),
      sameOperation: await wave(
        api,
        providers,
        Array.from({ length: same }, () => one),
      ),
    };
  } finally {
    for (const provider of providers) await provider.dispose();
  }
}
