// Benchmark of the local Vercel Sandbox emulator: the emulator's own cost per create, run `true`,
// stop and auto-resume, measured by the real SDK (client wall time) and by the emulator's request
// log (server time), plus how many round trips each operation takes. Run after `npm run build`:
//   node bench/emulator.bench.mjs [runs]
import { Sandbox } from "@vercel/sandbox";
import { startLocalSandboxApi } from "../dist/emulator/index.js";

const runs = Number(process.argv[2] ?? 30);
const api = await startLocalSandboxApi();
const connection = { ...api.credentials, fetch: api.fetch };

const samples = { create: [], "run true": [], stop: [], "resume + run true": [], delete: [] };
const server = { create: [], "run true": [], stop: [], "resume + run true": [], delete: [] };
const trips = { create: 0, "run true": 0, stop: 0, "resume + run true": 0, delete: 0 };

async function measure(label, fn) {
  const before = api.requests().length;
  const started = performance.now();
  const value = await fn();
  samples[label].push(performance.now() - started);
  const log = api.requests().slice(before);
  server[label].push(log.reduce((sum, r) => sum + r.ms, 0));
  trips[label] += log.length;
  return value;
}

const quantile = (values, q) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];
};

try {
  // One warm-up lifecycle so module loading and first spawns are not counted.
  const warm = await Sandbox.create(connection);
  await warm.runCommand("true");
  await warm.delete();
  for (let i = 0; i < runs; i++) {
    const sandbox = await measure("create", () => Sandbox.create(connection));
    const result = await measure("run true", () => sandbox.runCommand("true"));
    if (result.exitCode !== 0) throw new Error(`true exited with ${result.exitCode}`);
    await measure("stop", () => sandbox.stop());
    await measure("resume + run true", () => sandbox.runCommand("true"));
    await measure("delete", () => sandbox.delete());
  }
  const fmt = (n) => n.toFixed(1).padStart(8);
  console.log(`emulator benchmark: ${runs} runs, Node ${process.version}, ${api.url}`);
  console.log(
    `${"operation".padEnd(20)} ${"client p50".padStart(10)} ${"client p90".padStart(10)} ${"server p50".padStart(10)} ${"server p90".padStart(10)} requests/op`,
  );
  for (const label of Object.keys(samples)) {
    console.log(
      `${label.padEnd(20)}   ${fmt(quantile(samples[label], 0.5))}   ${fmt(quantile(samples[label], 0.9))}   ${fmt(quantile(server[label], 0.5))}   ${fmt(quantile(server[label], 0.9))}   ${(trips[label] / runs).toFixed(1)}`,
    );
  }
  const byRoute = new Map();
  for (const r of api.requests()) {
    const key = `${r.method} ${r.path.replace(/sbx_\w+|snap_\w+|cmd_\w+|sandbox-[\w-]+/g, ":id")} ${r.status}`;
    byRoute.set(key, (byRoute.get(key) ?? 0) + 1);
  }
  console.log(`\nrequest log (${api.requests().length} requests):`);
  for (const [key, count] of [...byRoute].sort()) console.log(`  ${String(count).padStart(4)}  ${key}`);
} finally {
  await api.close();
}
