#!/usr/bin/env node
// Provider cost against the embedded emulator: Vercel API requests per cold provision (without node
// enrollment), per replay, per inspect and per destroy, from the emulator's request log; and the plugin's own
// overhead per provision (wall time minus the time the API spent answering). Run: `npm run bench`.
import { randomBytes } from "node:crypto";
import { startLocalSandboxApi } from "../dist/emulator/index.js";
import { createVercelSandboxProvider } from "../dist/provider/index.js";

const RUNS = Number(process.env.BENCH_RUNS ?? 20);
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const p90 = (xs) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(xs.length * 0.9))];
const op = () => `provision:v2:${randomBytes(32).toString("hex")}`;
const enrollment = () => ({
  nodeBootstrap: {
    url: "https://gateway.bench.invalid/__openclaw__/worker-bootstrap/artifacts/x",
    token: "bench-bootstrap-token",
    sha256: "0".repeat(64),
    bytes: 1,
    openclawVersion: "2026.9.2",
    enabledPluginIds: [],
  },
  openclawVersion: "2026.9.2",
  displayName: "bench",
  waitForDeviceId: async () => "device-bench",
  mode: "connect",
  setupCode: "bench-setup-code",
  setupId: "bench",
});

const api = await startLocalSandboxApi();
const provider = createVercelSandboxProvider({
  env: { BENCH_TOKEN: api.credentials.token },
  logger: { warn: () => undefined },
  scope: "bench",
  enroll: async ({ enrollment: e }) => e.waitForDeviceId(),
});
const profile = {
  apiUrl: api.url,
  tokenEnv: "BENCH_TOKEN",
  teamId: api.credentials.teamId,
  projectId: api.credentials.projectId,
};
const options = () => ({ executionMode: "worker-turn", beginNodeEnrollment: async () => enrollment() });

/** Runs one call and reports its wall time, its requests and the time the API spent answering them. */
async function measure(call) {
  const before = api.requests().length;
  const start = performance.now();
  await call();
  const wall = performance.now() - start;
  const requests = api.requests().slice(before);
  return { wall, requests: requests.length, apiMs: requests.reduce((sum, r) => sum + r.ms, 0) };
}

const rows = { provision: [], replay: [], inspect: [], destroy: [] };
try {
  for (let i = 0; i < RUNS; i += 1) {
    const id = op();
    let leaseId;
    rows.provision.push(await measure(async () => ({ leaseId } = await provider.provision(profile, id, options()))));
    rows.replay.push(await measure(() => provider.provision(profile, id, options())));
    rows.inspect.push(await measure(() => provider.inspect({ leaseId, profile })));
    rows.destroy.push(await measure(() => provider.destroy({ leaseId, profile })));
  }
} finally {
  await provider.dispose();
  await api.close();
}

console.log(`provider against the emulator, ${RUNS} runs (median / p90)`);
console.log("operation   requests   wall ms            plugin overhead ms (wall - API time)");
for (const [name, xs] of Object.entries(rows)) {
  const overhead = xs.map((x) => x.wall - x.apiMs);
  console.log(
    `${name.padEnd(11)} ${String(median(xs.map((x) => x.requests))).padEnd(10)} ` +
      `${median(xs.map((x) => x.wall))
        .toFixed(1)
        .padStart(6)} / ${p90(xs.map((x) => x.wall))
        .toFixed(1)
        .padEnd(9)} ` +
      `${median(overhead).toFixed(2).padStart(6)} / ${p90(overhead).toFixed(2)}`,
  );
}
