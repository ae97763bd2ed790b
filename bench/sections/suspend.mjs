// Suspend on an idle real gateway (started by sections/gateway.mjs) whose plugin has a `suspend` block with an
// idle interval of 0, so the gateway is idle whenever no turn is in flight. Each run is POST /suspend → ready as
// a host does it (GatewayClient.suspend: retries draining and busy with one requestId) and then a resume, so the
// next run starts from a running gateway again. The first cycle after start is kept apart: the gateway may still
// hold tracked work of its own then. The POSTs each run took are counted at the client's dispatcher (more than
// one means the gateway answered draining or busy first). The gateway's own RSS is read from /proc.
import { readFileSync } from "node:fs";
import { Agent } from "undici";
import { GatewayClient, ROUTES } from "../../dist/host/index.js";
import { quantile, round } from "../lib/stats.mjs";

export const SUSPEND = { idleAfter: 0, pollInterval: "1s", renotifyAfter: "1h" };

/** VmRSS of a process, in bytes. */
function rssOf(pid) {
  const kib = /^VmRSS:\s+(\d+) kB$/m.exec(readFileSync(`/proc/${pid}/status`, "utf8"))?.[1];
  if (!kib) throw new Error(`/proc/${pid}/status has no VmRSS line`);
  return Number(kib) * 1024;
}

/** An undici dispatcher that counts the suspend POSTs sent through it. */
function countingDispatcher() {
  const counter = { posts: 0 };
  const agent = new Agent();
  const dispatcher = agent.compose((dispatch) => (options, handler) => {
    if (options.method === "POST" && options.path === ROUTES.suspend) counter.posts += 1;
    return dispatch(options, handler);
  });
  return { dispatcher, counter, close: () => agent.close() };
}

async function cycle(client, counter, requestId) {
  const before = counter.posts;
  const started = performance.now();
  const ready = await client.suspend({ requestId, deadlineMs: 60_000 });
  const ms = performance.now() - started;
  if (ready.status !== "ready") throw new Error(`POST /suspend ended ${JSON.stringify(ready)}, not ready`);
  const resumed = await client.resume(ready.suspensionId);
  if (!resumed.resumed) throw new Error(`resume of ${ready.suspensionId} answered ${JSON.stringify(resumed)}`);
  return { ms, posts: counter.posts - before };
}

/** Suspend/resume cycles on a started gateway (sections/gateway.mjs) whose plugin has `SUSPEND` configured. */
export async function suspendCycles(harness, runs) {
  const { dispatcher, counter, close } = countingDispatcher();
  try {
    const token = (await harness.readConfig()).gateway.auth.token;
    const baseUrl = `http://127.0.0.1:${harness.port}`;
    const client = new GatewayClient({ baseUrl, token, timeoutMs: 30_000, dispatcher });
    const first = await cycle(client, counter, "bench-first");
    const samples = [];
    for (let i = 0; i < runs; i += 1) samples.push(await cycle(client, counter, `bench-${i}`));
    const ms = samples.map((s) => s.ms);
    return {
      where: "openclaw 2026.9.2 gateway, plugin installed from npm pack, idle (idleAfter 0), loopback",
      runs,
      firstAfterStart: { ms: round(first.ms, 1), posts: first.posts },
      samplesMs: ms.map((v) => round(v, 1)),
      postsPerRun: samples.map((s) => s.posts),
      medianMs: round(quantile(ms, 0.5), 1),
      maxMs: round(Math.max(...ms), 1),
      gatewayRssBytes: rssOf(harness.gatewayPid),
    };
  } finally {
    await close();
  }
}
