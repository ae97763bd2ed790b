#!/usr/bin/env node
// The memory figure's own process: only the built provider (the emulator answers from the bench's own process),
// so its heap and RSS growth is the plugin's. Runs lib/lease-memory.mjs with BENCH_LEASES leases and reports
// one JSON line on stdout. Started by bench/sections/memory.mjs with --expose-gc.
import { leaseMemory } from "./lib/lease-memory.mjs";
import { makeProvider, standInEnroller, TOKEN_ENV } from "./lib/provider.mjs";

const profile = {
  apiUrl: process.env.BENCH_API_URL,
  tokenEnv: TOKEN_ENV,
  teamId: process.env.BENCH_TEAM_ID,
  projectId: process.env.BENCH_PROJECT_ID,
};
const provider = makeProvider(process.env.BENCH_API_TOKEN, { scope: "bench-memory", enroll: standInEnroller });
try {
  const figures = await leaseMemory(provider, profile, Number(process.env.BENCH_LEASES ?? 50), globalThis.gc);
  process.stdout.write(`${JSON.stringify(figures)}\n`);
} finally {
  await provider.dispose();
}
