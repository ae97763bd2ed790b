// Plugin overhead per operation: wall time minus the emulator's service time for the requests in the window,
// measured side by side with the same operation done by a process-per-call bridge (bridge-call.mjs, spawned
// per sample). Samples alternate plugin / bridge so drift on a shared machine hits both alike. The ratio is
// bridge overhead over plugin overhead, at the median.
import { spawn } from "node:child_process";
import { setTimeout as sleep } from "node:timers/promises";
import { fileURLToPath } from "node:url";
import {
  makeProvider,
  operationId,
  profileOf,
  sandboxNameOfLease,
  standInEnroller,
  standInOptions,
} from "../lib/provider.mjs";
import { round, serviceMs, summary } from "../lib/stats.mjs";
import { RENEWABLE_AFTER_MS } from "./round-trips.mjs";

const BRIDGE = fileURLToPath(new URL("../bridge-call.mjs", import.meta.url));

/** The plugin operations, each with the bridge operation that makes the same SDK calls. */
const OPERATIONS = [
  ["cold provision (stand-in enroller)", "provision"],
  ["replay (same process)", "lookup"],
  ["inspect", "lookup"],
  ["renew", "renew"],
  ["destroy", "destroy"],
];

function bridgeCall(api, operation, name) {
  const env = {
    ...process.env,
    BENCH_API_URL: api.url,
    BENCH_API_TOKEN: api.credentials.token,
    BENCH_TEAM_ID: api.credentials.teamId,
    BENCH_PROJECT_ID: api.credentials.projectId,
  };
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [BRIDGE, operation, name], { env, stdio: ["ignore", "ignore", "pipe"] });
    let stderr = "";
    child.stderr.on("data", (chunk) => {
      stderr += chunk;
    });
    child.on("error", reject);
    child.on("exit", (code) => (code === 0 ? resolve() : reject(new Error(`bridge ${operation}: ${stderr.trim()}`))));
  });
}

export async function overhead(api, runs) {
  const profile = profileOf(api);
  const provider = makeProvider(api.credentials.token, { scope: "bench-overhead", enroll: standInEnroller });
  const samples = Object.fromEntries(OPERATIONS.map(([label]) => [label, { plugin: [], bridge: [], requests: [] }]));
  async function measure(label, side, call) {
    const from = api.requests().length;
    const started = performance.now();
    await call();
    const wall = performance.now() - started;
    const log = api.requests().slice(from);
    samples[label][side].push(wall - serviceMs(log));
    if (side === "plugin") samples[label].requests.push(log.length);
  }
  try {
    // One warm-up of each side, so module loading and first spawns are not sampled.
    const warm = operationId();
    const { leaseId: warmLease } = await provider.provision(profile, warm, standInOptions());
    await provider.destroy({ leaseId: warmLease, profile });
    await bridgeCall(api, "provision", "bench-bridge-warm");
    await bridgeCall(api, "destroy", "bench-bridge-warm");
    for (let i = 0; i < runs; i += 1) {
      const op = operationId();
      const { leaseId } = await provider.resolveAllocation(profile, op);
      const lease = { leaseId, profile };
      const name = `bench-bridge-${i}-${sandboxNameOfLease(leaseId).slice(-8)}`;
      let provisionedAt = 0;
      const plugin = {
        "cold provision (stand-in enroller)": async () => {
          await provider.provision(profile, op, standInOptions());
          provisionedAt = performance.now();
        },
        "replay (same process)": () => provider.provision(profile, op, standInOptions()),
        inspect: () => provider.inspect(lease),
        renew: () => provider.renew(leaseId),
        destroy: () => provider.destroy(lease),
      };
      for (const [label, bridgeOperation] of OPERATIONS) {
        // As in round-trips.mjs: a renew has something to extend once the session has run past the minimum.
        if (label === "renew") await sleep(Math.max(0, RENEWABLE_AFTER_MS - (performance.now() - provisionedAt)));
        await measure(label, "plugin", plugin[label]);
        await measure(label, "bridge", () => bridgeCall(api, bridgeOperation, name));
      }
    }
  } finally {
    await provider.dispose();
  }
  return OPERATIONS.map(([operation, bridgeOperation]) => {
    const { plugin, bridge, requests } = samples[operation];
    const p = summary(plugin);
    const b = summary(bridge);
    return {
      operation,
      bridgeOperation,
      runs: plugin.length,
      requests: requests[0] ?? null,
      pluginOverheadMs: p,
      bridgeOverheadMs: b,
      ratio: round(b.p50 / p.p50, 1),
    };
  });
}
