// Issue 23, scheduled wake on the real gateway: the packed plugin with `suspend.wakeLead` projects the gateway's
// cron run times to a host (an HTTP server here using the host library: verifyWakeNotification + WakeSchedule on
// a FileWakeStore). A one-shot job due in ~90 s reaches the host as a signed snapshot, GET status carries the same
// list, the idle clock does not call the gateway idle while the job is within the lead (10 minutes here), and the job runs (its run
// recorded in cron.runs). A changed or removed job replaces the snapshot; a stale revision is never accepted.
// (The gateway runs on this machine, not inside a sleeping VM1: the sleep/wake of VM1 itself is the main job's.)
import { randomBytes } from "node:crypto";
import { readFile } from "node:fs/promises";
import http from "node:http";
import type { AddressInfo } from "node:net";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  FileWakeStore,
  GatewayClient,
  MemoryNonceStore,
  notificationKind,
  signNotification,
  verifyWakeNotification,
  type WakeNotification,
  WakeSchedule,
} from "../../src/host/index.js";
import { GatewayHarness, parseCliJson, waitFor } from "./harness.js";

const SECRET_ENV = "VSB_NOTIFY_SECRET";
const secret = randomBytes(24).toString("hex");
const LEAD_MS = 600_000;
let harness: GatewayHarness | undefined;
let server: http.Server | undefined;
let notifyUrl = "";
let token = "";
let schedule: WakeSchedule | undefined;
const received: WakeNotification[] = [];
const bodies: string[] = [];
/** The signature headers each received body came with, as sent (for replaying one exactly). */
const signatures: Array<Record<string, string>> = [];
/** The host's one nonce store, as a real host keeps it: a nonce seen once is refused after, whatever the body. */
const nonces = new MemoryNonceStore();
const SIGNATURE_HEADERS = Object.keys(signNotification("", ""));

function gw(): GatewayHarness {
  if (!harness) throw new Error("gateway harness was not created (see beforeAll)");
  return harness;
}
function wakes(): WakeSchedule {
  if (!schedule) throw new Error("schedule was not created (see beforeAll)");
  return schedule;
}
const client = () => new GatewayClient({ baseUrl: `http://127.0.0.1:${gw().port}`, token, timeoutMs: 30_000 });

/** The host's notify endpoint: wake snapshots are verified and kept (2xx only once durable); sleep ones noted. */
async function handle(req: http.IncomingMessage, res: http.ServerResponse) {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  const body = Buffer.concat(chunks).toString("utf8");
  if (notificationKind(body) !== "wake") return res.writeHead(202).end();
  const verified = await verifyWakeNotification({ secret, headers: req.headers, body, nonces });
  if (!verified.ok) return res.writeHead(401).end(verified.reason);
  const outcome = await wakes().accept(verified.notification);
  const n = verified.notification;
  process.stderr.write(
    `[scheduled wake] host got ${n.instanceId.slice(0, 8)} r${n.snapshot.revision} ${JSON.stringify(n.snapshot.wakes).slice(0, 200)} → ${outcome}\n`,
  );
  received.push(verified.notification);
  bodies.push(body);
  signatures.push(Object.fromEntries(SIGNATURE_HEADERS.map((h) => [h, String(req.headers[h])])));
  res.writeHead(outcome === "accepted" ? 200 : 409).end(outcome);
}

async function automation(args: string[]): Promise<{ id?: string }> {
  const result = await gw().ocOk(["automations", ...args, "--json"], { timeoutMs: 120_000 });
  return parseCliJson<{ id?: string }>(result.stdout) ?? {};
}

const latestFor = (predicate: (n: WakeNotification) => boolean, what: string) =>
  waitFor(what, async () => received.findLast(predicate), { timeoutMs: 120_000, intervalMs: 500 });

beforeAll(async () => {
  harness = await GatewayHarness.create();
  token = ((await harness.readConfig()) as { gateway: { auth: { token: string } } }).gateway.auth.token;
  schedule = new WakeSchedule(new FileWakeStore(path.join(harness.runDir, "host-state")));
  server = http.createServer((req, res) => void handle(req, res).catch(() => res.writeHead(500).end()));
  await new Promise<void>((resolve) => server?.listen(0, "127.0.0.1", resolve));
  notifyUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/notify`;
  const pluginDir = process.env.OPENCLAW_TEST_PLUGIN_DIR;
  await harness.installPlugin(await (pluginDir ? harness.packPlugin(pluginDir) : harness.packPlugin()));
  // The gateway's own recurring jobs (heartbeat every 30 minutes, dreaming at 03:00, the weekly skill review) are
  // off: within the 10-minute lead of one, depending on the time of day, nothing would ever be idle.
  await harness.patchConfig({
    agents: { defaults: { heartbeat: { every: "0m" } } },
    skills: { workshop: { autonomous: { mode: "off" } } },
    plugins: {
      entries: {
        "vercel-sandbox": {
          config: { suspend: { idleAfter: 0, pollInterval: "1h", notifyUrl, secretEnv: SECRET_ENV, wakeLead: "10m" } },
        },
        "memory-core": { config: { dreaming: { enabled: false } } },
      },
    },
  });
  await harness.startGateway({ env: { [SECRET_ENV]: secret }, secrets: [secret] });
}, 420_000);

afterAll(async () => {
  try {
    await harness?.dispose();
  } finally {
    server?.closeAllConnections();
    await new Promise((resolve) => server?.close(resolve));
  }
}, 120_000);

describe("scheduled wake: the gateway's cron run times reach the host", () => {
  it("a job due in ~90 s is projected, holds sleep while within the lead, and runs when due", {
    timeout: 300_000,
  }, async () => {
    await latestFor(() => true, "the first wake snapshot (cron reconciled at start)");
    const dueMs = Math.ceil((Date.now() + 90_000) / 1_000) * 1_000;
    const marker = path.join(gw().runDir, "job-ran");
    const job = await automation([
      "add",
      "--name",
      "wake-spec",
      "--at",
      new Date(dueMs).toISOString(),
      "--command",
      `date +%s%3N > ${marker}`,
      "--no-deliver",
      "--keep-after-run",
    ]);
    expect(job.id).toEqual(expect.any(String));
    const projected = await latestFor(
      (n) => n.snapshot.wakes.some((w) => w.jobId === job.id),
      "a snapshot listing the job",
    );
    const listed = projected.snapshot.wakes.find((w) => w.jobId === job.id);
    expect(listed?.runAtMs).toBe(dueMs);
    expect(projected.leadMs).toBe(LEAD_MS);
    // With the gateway's own recurring jobs off, the job is the whole list, and the host wakes for it.
    const kept = await wakes().latest();
    expect(kept?.snapshot.wakes.map((w) => [w.jobId, w.runAtMs])).toEqual([[job.id, dueMs]]);
    expect(await wakes().nextWakeAt()).toBe(dueMs - LEAD_MS);
    const status = await client().status();
    expect(status.wake?.wakes).toEqual(projected.snapshot.wakes);
    expect(status.wakeLeadMs).toBe(LEAD_MS);
    // idleAfter is 0: only the job due within the lead keeps the clock from calling the gateway idle.
    expect(status.due).toBeUndefined();
    expect(await client().suspendOnce("within-the-lead")).toMatchObject({ status: "busy", reason: "activity" });

    const ranAtMs = await waitFor(
      "the job's run",
      async () => {
        const text = await readFile(marker, "utf8").catch(() => "");
        return /^[0-9]{13}$/.test(text.trim()) ? Number(text.trim()) : undefined;
      },
      { timeoutMs: 120_000, intervalMs: 500 },
    );
    const runs = await gw().callOk<{ entries?: Array<{ jobId?: string; ts?: number; status?: string }> }>("cron.runs", {
      id: job.id,
    });
    process.stderr.write(
      `[scheduled wake] job due ${new Date(dueMs).toISOString()}, ran ${new Date(ranAtMs).toISOString()} (${ranAtMs - dueMs} ms after due); cron.runs entries ${JSON.stringify(runs).slice(0, 300)}\n`,
    );
    expect(ranAtMs).toBeGreaterThanOrEqual(dueMs);
    expect(JSON.stringify(runs)).toContain(job.id as string);
    // Once run, the one-shot job has no next run: with nothing else due within the lead, nothing holds the clock.
    await latestFor(
      (n) =>
        !n.snapshot.wakes.some((w) => w.jobId === job.id) &&
        n.snapshot.wakes.every((w) => w.runAtMs - Date.now() > LEAD_MS),
      "a snapshot without the run job and with nothing else due within the lead",
    );
    const after = await client().status();
    expect(after.due, `status after the run: ${JSON.stringify({ ...after, workers: undefined })}`).toBe("idle");
  });

  it("a changed job replaces the snapshot, a removed one leaves it, and a stale revision is never accepted", {
    timeout: 300_000,
  }, async () => {
    const firstAt = Math.ceil((Date.now() + 600_000) / 1_000) * 1_000;
    const job = await automation([
      "add",
      "--name",
      "wake-edit",
      "--at",
      new Date(firstAt).toISOString(),
      "--command",
      "true",
      "--no-deliver",
    ]);
    const before = await latestFor(
      (n) => n.snapshot.wakes.some((w) => w.jobId === job.id && w.runAtMs === firstAt),
      "the job listed",
    );
    const movedAt = firstAt + 300_000;
    await automation(["edit", job.id as string, "--at", new Date(movedAt).toISOString()]);
    const moved = await latestFor(
      (n) => n.snapshot.wakes.some((w) => w.jobId === job.id && w.runAtMs === movedAt),
      "the job moved",
    );
    expect(moved.snapshot.revision).toBeGreaterThan(before.snapshot.revision);
    expect((await wakes().latest())?.snapshot.wakes.find((w) => w.jobId === job.id)?.runAtMs).toBe(movedAt);
    await automation(["rm", job.id as string]);
    const removed = await latestFor(
      (n) => n.snapshot.revision > moved.snapshot.revision && !n.snapshot.wakes.some((w) => w.jobId === job.id),
      "the job removed",
    );
    expect((await wakes().latest())?.snapshot.revision).toBe(removed.snapshot.revision);

    // The earlier snapshot, delivered again (a retry that arrives late): refused, the kept one unchanged.
    const staleBody = bodies[received.indexOf(before)] as string;
    const answer = await fetch(notifyUrl, {
      method: "POST",
      headers: signNotification(secret, staleBody),
      body: staleBody,
    });
    expect(answer.status).toBe(409);
    expect((await wakes().latest())?.snapshot.revision).toBe(removed.snapshot.revision);

    // The latest snapshot replayed exactly as the plugin sent it (same nonce and signature, within the window):
    // refused as a replay by the host's nonce store, before its revision is even looked at.
    const at = received.indexOf(removed);
    const replay = await fetch(notifyUrl, { method: "POST", headers: signatures[at], body: bodies[at] as string });
    expect([replay.status, await replay.text()]).toEqual([401, "replayed"]);
  });
});
