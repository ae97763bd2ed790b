// The emulator's own cost per create, run `true`, stop, resume (+ run `true`) and delete, through the real
// SDK: its service time per operation from its request log, requests per operation, and that service time
// as a multiple of a bare `spawn("true")` measured in the same run (the cheapest process start there is).
// Then, BENCH_SNAPSHOT_RUNS times (default 3): a snapshot of a sandbox holding a 1 GiB file, and a create
// from that snapshot, whose cost should not grow with the filesystem's size.
import { spawn } from "node:child_process";
import { Sandbox } from "@vercel/sandbox";
import { round, serviceMs, summary } from "../lib/stats.mjs";

const LABELS = ["create", "run true", "stop", "resume + run true", "delete"];

const spawnTrue = () =>
  new Promise((resolve, reject) => {
    const started = performance.now();
    const child = spawn("true", { stdio: "ignore" });
    child.on("error", reject);
    child.on("exit", () => resolve(performance.now() - started));
  });

export async function emulatorCost(api, runs) {
  const connection = { ...api.credentials, fetch: api.fetch };
  const server = Object.fromEntries(LABELS.map((l) => [l, []]));
  const trips = Object.fromEntries(LABELS.map((l) => [l, 0]));
  async function measure(label, fn) {
    const from = api.requests().length;
    const value = await fn();
    const log = api.requests().slice(from);
    server[label].push(serviceMs(log));
    trips[label] += log.length;
    return value;
  }
  const warm = await Sandbox.create(connection);
  await warm.runCommand("true");
  await warm.delete();
  const spawns = [];
  for (let i = 0; i < runs; i += 1) {
    const sandbox = await measure("create", () => Sandbox.create(connection));
    const result = await measure("run true", () => sandbox.runCommand("true"));
    if (result.exitCode !== 0) throw new Error(`true exited with ${result.exitCode}`);
    // The baseline is the machine's, so it is taken where the emulator does nothing in the background: a stop or
    // a delete starts the next boots' spares (lifecycle.ts), which a spawn right after would share the CPUs with.
    spawns.push(await spawnTrue());
    await measure("stop", () => sandbox.stop());
    await measure("resume + run true", () => sandbox.runCommand("true"));
    await measure("delete", () => sandbox.delete());
  }
  const big = await bigSnapshotCost(connection, measure, server, trips);
  const spawnMs = summary(spawns);
  return {
    spawnTrueMs: spawnMs,
    rows: [...LABELS, ...big.labels].map((operation) => {
      const n = big.labels.includes(operation) ? big.runs : runs;
      const ms = summary(server[operation]);
      return {
        operation,
        runs: n,
        requestsPerOp: round(trips[operation] / n, 1),
        serviceMs: ms,
        xSpawnTrue: round(ms.p50 / spawnMs.p50, 1),
      };
    }),
  };
}

const BIG_LABELS = ["snapshot, 1 GiB sandbox", "create from the 1 GiB snapshot"];

async function bigSnapshotCost(connection, measure, server, trips) {
  const runs = Math.max(1, Number(process.env.BENCH_SNAPSHOT_RUNS ?? 3));
  for (const label of BIG_LABELS) {
    server[label] = [];
    trips[label] = 0;
  }
  for (let i = 0; i < runs; i += 1) {
    const sandbox = await Sandbox.create({ ...connection, timeout: 600_000 });
    const fill = await sandbox.runCommand("dd", ["if=/dev/zero", "of=/vercel/sandbox/big", "bs=1M", "count=1024"]);
    if (fill.exitCode !== 0) throw new Error(`dd exited with ${fill.exitCode}`);
    const snapshot = await measure(BIG_LABELS[0], () => sandbox.snapshot());
    const restored = await measure(BIG_LABELS[1], () =>
      Sandbox.create({ ...connection, source: { type: "snapshot", snapshotId: snapshot.snapshotId } }),
    );
    const size = await restored.runCommand("stat", ["-c", "%s", "/vercel/sandbox/big"]);
    if ((await size.stdout()).trim() !== String(1024 * 1024 * 1024)) throw new Error("the restored file is not 1 GiB");
    await restored.delete();
    await sandbox.delete();
    await snapshot.delete();
  }
  return { labels: BIG_LABELS, runs };
}

/** The emulator table alone (BENCH_ONLY=emulator). */
export function emulatorMarkdown(emulator) {
  const ms = (v) => `${v.p50} / ${v.p95}`;
  const lines = [
    `**Emulator's own cost** (service time, ms p50 / p95; × = p50 over a bare \`spawn("true")\`, ${ms(emulator.spawnTrueMs)} ms here)`,
    "",
    "| operation | runs | requests/op | service ms | × spawn(true) |",
    "| --- | --- | --- | --- | --- |",
  ];
  for (const r of emulator.rows) {
    lines.push(`| ${r.operation} | ${r.runs} | ${r.requestsPerOp} | ${ms(r.serviceMs)} | ${r.xSpawnTrue}× |`);
  }
  return lines.join("\n");
}
