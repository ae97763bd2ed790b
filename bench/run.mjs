#!/usr/bin/env node
// `npm run bench`: the project's performance record. Runs every section against one embedded emulator, prints
// Markdown tables and writes the JSON record (BENCH_OUT, default bench/results/latest.json). Every figure is a
// count, or a time set against another measured in the same run; nothing here fails on time.
// Sizes: BENCH_RUNS (samples per timed figure, default 50), BENCH_DISTINCT / BENCH_SAME (concurrent
// provisions, default 50 / 20), BENCH_LEASES (tracked leases for memory, default 50).
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { availableParallelism, cpus, release } from "node:os";
import { dirname } from "node:path";
import { fileURLToPath } from "node:url";
import { startLocalSandboxApi } from "../dist/emulator/index.js";
import { formattedJson, markdown } from "./lib/report.mjs";
import { concurrency } from "./sections/concurrency.mjs";
import { emulatorCost } from "./sections/emulator.mjs";
import { memory } from "./sections/memory.mjs";
import { overhead } from "./sections/overhead.mjs";
import { roundTrips } from "./sections/round-trips.mjs";

const size = (name, fallback) => Math.max(1, Number(process.env[name] ?? fallback));
const runs = size("BENCH_RUNS", 50);
const out = process.env.BENCH_OUT ?? fileURLToPath(new URL("./results/latest.json", import.meta.url));
const sdk = JSON.parse(readFileSync(new URL("../node_modules/@vercel/sandbox/package.json", import.meta.url), "utf8"));

const notBuilt = {
  roundTrips: [
    {
      operation: "warm provision (from a warm image)",
      floor: 4,
      reason: "preparation has not landed; floor: create from snapshot, write the bootstrap, run it, wait",
    },
  ],
  figures: [
    {
      figure: "warm vs cold provision (onCreateCommand sleeps 5 s; goal warm <= 10 % of cold)",
      reason: "preparation has not landed",
    },
    { figure: "suspend: POST /suspend -> ready on an idle real gateway", reason: "the suspend issue has not landed" },
  ],
};

const step = (name) => process.stderr.write(`bench: ${name}…\n`);
const api = await startLocalSandboxApi();
const record = {
  machine: {
    nproc: availableParallelism(),
    cpu: cpus()[0]?.model.trim() ?? "unknown",
    node: process.version,
    platform: `${process.platform} ${release()}`,
    sdk: sdk.version,
    date: new Date().toISOString(),
  },
  runs,
};
try {
  step("round trips");
  record.roundTrips = await roundTrips(api);
  step(`plugin overhead vs process-per-call, ${runs} runs`);
  record.overhead = await overhead(api, runs);
  step("concurrency");
  record.concurrency = await concurrency(api, { distinct: size("BENCH_DISTINCT", 50), same: size("BENCH_SAME", 20) });
  step("memory");
  record.memory = await memory(api, size("BENCH_LEASES", 50));
  step(`emulator cost, ${runs} runs`);
  record.emulator = await emulatorCost(api, runs);
  record.notBuilt = notBuilt;
} finally {
  await api.close();
}
mkdirSync(dirname(out), { recursive: true });
writeFileSync(out, `${formattedJson(record)}\n`);
process.stdout.write(`${markdown(record)}\n\nJSON: ${out}\n`);
