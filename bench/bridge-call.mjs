#!/usr/bin/env node
// One Vercel operation the way a process-per-call bridge does it (Crabbox's Vercel backend): a fresh Node
// process imports `@vercel/sandbox`, performs the SDK calls of one operation and exits. The bench spawns it
// once per sample. Usage: node bench/bridge-call.mjs <operation> <sandbox name>; the API comes from the
// environment (BENCH_API_URL, BENCH_API_TOKEN, BENCH_TEAM_ID, BENCH_PROJECT_ID), never argv.
import { Sandbox } from "@vercel/sandbox";

const [operation, name] = process.argv.slice(2);
const api = process.env.BENCH_API_URL;
const connection = {
  token: process.env.BENCH_API_TOKEN,
  teamId: process.env.BENCH_TEAM_ID,
  projectId: process.env.BENCH_PROJECT_ID,
  fetch: (input, init) => globalThis.fetch(String(input).replace(/^https:\/\/vercel\.com\/api/, api), init),
};
const opened = { allow: ["registry.npmjs.org", "gateway.bench.invalid"] };
const narrowed = { allow: ["gateway.bench.invalid"] };

const operations = {
  // As the plugin's cold provision with a stand-in enroller: create, open egress, narrow it.
  provision: async () => {
    const sandbox = await Sandbox.create({ ...connection, name, runtime: "node24", networkPolicy: "deny-all" });
    await sandbox.updateNetworkPolicy(opened);
    await sandbox.updateNetworkPolicy(narrowed);
  },
  lookup: async () => void (await Sandbox.get({ ...connection, name })),
  renew: async () => {
    const sandbox = await Sandbox.get({ ...connection, name });
    await sandbox.extendTimeout(60_000);
  },
  destroy: async () => {
    const sandbox = await Sandbox.get({ ...connection, name });
    await sandbox.delete();
    await Sandbox.get({ ...connection, name }).then(
      () => {
        throw new Error(`${name} still exists after delete`);
      },
      () => undefined,
    );
  },
};

if (!operations[operation]) throw new Error(`unknown operation ${operation}`);
await operations[operation]();
