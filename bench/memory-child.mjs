#!/usr/bin/env node
// The memory figure's process: only the built provider (the emulator answers from the bench's own process),
// so its heap and RSS growth is the plugin's. After one warm-up lease, it provisions BENCH_LEASES leases that
// stay tracked (keepalive armed), collects garbage, and reports the growth as one JSON line on stdout; then it
// destroys them. Started by bench/sections/memory.mjs with --expose-gc.
import { makeProvider, operationId, standInEnroller, standInOptions, TOKEN_ENV } from "./lib/provider.mjs";

const leases = Number(process.env.BENCH_LEASES ?? 50);
const profile = {
  apiUrl: process.env.BENCH_API_URL,
  tokenEnv: TOKEN_ENV,
  teamId: process.env.BENCH_TEAM_ID,
  projectId: process.env.BENCH_PROJECT_ID,
};
const provider = makeProvider(process.env.BENCH_API_TOKEN, { scope: "bench-memory", enroll: standInEnroller });

function settled() {
  for (let i = 0; i < 4; i += 1) globalThis.gc();
  const { heapUsed, rss } = process.memoryUsage();
  return { heapUsed, rss };
}

try {
  const warm = await provider.provision(profile, operationId(), standInOptions());
  await provider.destroy({ leaseId: warm.leaseId, profile });
  const before = settled();
  const held = [];
  for (let i = 0; i < leases; i += 1) held.push(await provider.provision(profile, operationId(), standInOptions()));
  const after = settled();
  process.stdout.write(
    `${JSON.stringify({
      leases: held.length,
      tracked: provider.keepaliveLeases().length,
      heapGrowthBytes: after.heapUsed - before.heapUsed,
      rssGrowthBytes: after.rss - before.rss,
    })}\n`,
  );
  for (const { leaseId } of held) await provider.destroy({ leaseId, profile });
} finally {
  await provider.dispose();
}
