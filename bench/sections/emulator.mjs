// The emulator's own cost per create, run `true`, stop, resume (+ run `true`) and delete, through the real
// SDK: its service time per operation from its request log, requests per operation, and that service time
// as a multiple of a bare `spawn("true")` measured in the same run (the cheapest process start there is).
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
    spawns.push(await spawnTrue());
    const sandbox = await measure("create", () => Sandbox.create(connection));
    const result = await measure("run true", () => sandbox.runCommand("true"));
    if (result.exitCode !== 0) throw new Error(`true exited with ${result.exitCode}`);
    await measure("stop", () => sandbox.stop());
    await measure("resume + run true", () => sandbox.runCommand("true"));
    await measure("delete", () => sandbox.delete());
  }
  const spawnMs = summary(spawns);
  return {
    spawnTrueMs: spawnMs,
    rows: LABELS.map((operation) => {
      const ms = summary(server[operation]);
      return {
        operation,
        runs,
        requestsPerOp: round(trips[operation] / runs, 1),
        serviceMs: ms,
        xSpawnTrue: round(ms.p50 / spawnMs.p50, 1),
      };
    }),
  };
}
