// Issue 9, "Idle real gateway": the packed plugin with a `suspend` block, installed into the real
// openclaw@2026.9.2 gateway (isolated state dir, token auth on loopback), driven over HTTP exactly as a host
// would: the routes answer only with the gateway token; POST /suspend on an idle gateway returns ready, status
// shows the lease (and /readyz says the gateway is fenced), resume reopens admission; bad bodies and methods
// are refused; concurrent suspends converge on one lease. It also measures POST /suspend → ready.
//
// The idle interval is 0 here (the clock is always idle unless a turn is in flight), so no spec waits for time.
// Right after start the gateway may still hold tracked work of its own, so a first answer can be `draining`:
// specs that need a lease acquire it as a host does, with GatewayClient.suspend (polls until ready).
import { randomBytes } from "node:crypto";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { GatewayClient, MemoryNonceStore, verifyNotification } from "../../src/host/index.js";
import { MAX_BODY_BYTES, ROUTES } from "../../src/protocol/protocol.js";
import { GatewayHarness, waitFor } from "./harness.js";

let harness: GatewayHarness | undefined;
let token = "";
// The host side of notifications: a loopback server that keeps each raw request for the specs to verify.
const SECRET_ENV = "VSB_NOTIFY_SECRET";
const secret = randomBytes(24).toString("hex");
const notifications: Array<{ headers: http.IncomingHttpHeaders; body: string }> = [];
const host = http.createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on("data", (chunk: Buffer) => chunks.push(chunk));
  req.on("end", () => {
    notifications.push({ headers: req.headers, body: Buffer.concat(chunks).toString("utf8") });
    res.statusCode = 204;
    res.end();
  });
});
const latenciesMs: number[] = [];

function gw(): GatewayHarness {
  if (!harness) throw new Error("gateway harness was not created (see beforeAll)");
  return harness;
}

const base = () => `http://127.0.0.1:${gw().port}`;
const client = () => new GatewayClient({ baseUrl: base(), token, timeoutMs: 30_000 });

/** Suspends as a host does (retrying draining/busy), recording how long POST /suspend took to reach ready. */
async function acquire(requestId: string, measure = false) {
  const started = performance.now();
  const result = await client().suspend({ requestId, deadlineMs: 60_000 });
  if (result.status !== "ready") throw new Error(`expected ready, got ${JSON.stringify(result)}`);
  if (measure) latenciesMs.push(Math.round(performance.now() - started));
  return result;
}

async function send(path: string, init: { method: string; body?: string; auth?: string | null }) {
  const auth = init.auth === undefined ? `Bearer ${token}` : init.auth;
  const response = await fetch(`${base()}${path}`, {
    method: init.method,
    headers: {
      ...(auth ? { authorization: auth } : {}),
      ...(init.body === undefined ? {} : { "content-type": "application/json" }),
    },
    ...(init.body === undefined ? {} : { body: init.body }),
    signal: AbortSignal.timeout(30_000),
  });
  const text = await response.text();
  return { status: response.status, text };
}

beforeAll(async () => {
  harness = await GatewayHarness.create();
  const config = (await harness.readConfig()) as { gateway: { auth: { token: string } } };
  token = config.gateway.auth.token; // in memory only; the harness redacts it from everything it returns
  await new Promise<void>((resolve) => host.listen(0, "127.0.0.1", resolve));
  const notifyUrl = `http://127.0.0.1:${(host.address() as AddressInfo).port}/notify`;
  await harness.installPlugin(await harness.packPlugin());
  const suspend = { idleAfter: 0, pollInterval: "1s", renotifyAfter: "1h", notifyUrl, secretEnv: SECRET_ENV };
  await harness.patchConfig({ plugins: { entries: { "vercel-sandbox": { config: { suspend } } } } });
  // The notification secret exists only in the gateway process's environment (and this test's memory).
  await harness.startGateway({ env: { [SECRET_ENV]: secret }, secrets: [secret] });
}, 420_000);

afterAll(async () => {
  await harness?.dispose();
  await new Promise((resolve) => host.close(resolve));
  if (latenciesMs.length > 0) {
    const sorted = [...latenciesMs].sort((a, b) => a - b);
    const median = sorted[Math.floor(sorted.length / 2)];
    process.stderr.write(
      `[suspend gateway test] POST /suspend → ready ms: ${JSON.stringify(sorted)} median ${median}\n`,
    );
  }
}, 120_000);

describe("sleep/wake routes on a real gateway: auth, methods and bodies", () => {
  it.each([
    ["no Authorization header", null],
    ["a wrong token", "Bearer not-the-gateway-token"],
  ])("with %s every route answers 401 and nothing is suspended", async (_what, auth) => {
    for (const [path, method] of [
      [ROUTES.status, "GET"],
      [ROUTES.suspend, "POST"],
      [ROUTES.resume, "POST"],
    ] as const) {
      const body = method === "POST" ? JSON.stringify({ requestId: "x", suspensionId: "x" }) : undefined;
      expect((await send(path, { method, auth, ...(body ? { body } : {}) })).status, path).toBe(401);
    }
    expect((await client().status()).suspension).toEqual({ phase: "running" });
  });

  it("wrong methods are 405; malformed bodies 400; an oversized body 413", async () => {
    expect((await send(ROUTES.status, { method: "POST", body: "{}" })).status).toBe(405);
    expect((await send(ROUTES.suspend, { method: "GET" })).status).toBe(405);
    expect((await send(ROUTES.suspend, { method: "POST", body: "{not json" })).status).toBe(400);
    expect((await send(ROUTES.suspend, { method: "POST", body: "{}" })).status).toBe(400);
    expect((await send(ROUTES.resume, { method: "POST", body: '{"suspensionId":""}' })).status).toBe(400);
    const big = JSON.stringify({ requestId: "a".repeat(MAX_BODY_BYTES) });
    expect((await send(ROUTES.suspend, { method: "POST", body: big })).status).toBe(413);
    expect((await client().status()).suspension).toEqual({ phase: "running" });
  });
});

describe("sleep/wake handshake on an idle real gateway", () => {
  it("status reports the clock, no workers and no suspension", async () => {
    const status = await client().status();
    expect(status).toMatchObject({ activeTurns: 0, idleAfterMs: 0, due: "idle", workers: [] });
    expect(status.suspension).toEqual({ phase: "running" });
  });

  it("suspend answers ready; status shows the lease and /readyz is fenced; resume reopens admission", async () => {
    const ready = await acquire("host-op-1", true);

    const status = await client().status();
    expect(status.suspension).toEqual({
      phase: "ready",
      requestId: "host-op-1",
      suspensionId: ready.suspensionId,
      expiresAtMs: ready.expiresAtMs,
    });
    expect(status.workers).toBeNull();
    expect(await gw().httpStatus("/readyz")).toBe(503);

    const again = await client().suspendOnce("host-op-1");
    expect(again).toMatchObject({ status: "ready", suspensionId: ready.suspensionId });

    expect(await client().resume(ready.suspensionId)).toEqual({ status: "running", resumed: true });
    expect(await gw().httpStatus("/readyz")).toBe(200);
    expect((await client().status()).suspension).toEqual({ phase: "running" });
    expect(await client().resume(ready.suspensionId)).toEqual({ status: "running", resumed: false });
  });

  it("concurrent suspends with different requestIds converge on one lease; the others are busy", async () => {
    const ids = ["c-1", "c-2", "c-3"];
    const results = await Promise.all(ids.map((id) => client().suspendOnce(id)));
    const held: Array<{ id: string; suspensionId: string }> = [];
    results.forEach((r, i) => {
      if (r.status !== "busy") held.push({ id: ids[i]!, suspensionId: r.suspensionId });
    });
    expect(held).toHaveLength(1);
    expect(results.filter((r) => r.status === "busy")).toHaveLength(2);
    const lease = await acquire(held[0]!.id);
    expect(lease.suspensionId).toBe(held[0]!.suspensionId);
    expect(await client().resume(lease.suspensionId)).toMatchObject({ resumed: true });
  });

  it("resume with another id while a lease is held is refused, and the lease stays", async () => {
    const ready = await acquire("host-op-2");
    const refused = await send(ROUTES.resume, { method: "POST", body: JSON.stringify({ suspensionId: "not-it" }) });
    expect(refused.status).toBe(400);
    expect((await client().status()).suspension).toMatchObject({ phase: "ready", suspensionId: ready.suspensionId });
    expect(await client().resume(ready.suspensionId)).toMatchObject({ resumed: true });
  });

  it("measures POST /suspend → ready over a few suspend/resume cycles", async () => {
    for (let i = 0; i < 5; i++) {
      const ready = await acquire(`measure-${i}`, true);
      expect(await client().resume(ready.suspensionId)).toMatchObject({ resumed: true });
    }
  });

  it("the resident notifies the host with a signed notification the host library accepts once, and refuses replayed", async () => {
    const first = await waitFor("a notification", async () => notifications[0], { timeoutMs: 60_000 });
    const nonces = new MemoryNonceStore();
    const verify = () => verifyNotification({ secret, headers: first.headers as never, body: first.body, nonces });
    const accepted = await verify();
    expect(accepted).toMatchObject({ ok: true, notification: { version: 1, reason: "idle" } });
    expect(await verify()).toEqual({ ok: false, reason: "replayed" });
    const forged = await verifyNotification({
      secret: "not-the-secret",
      headers: first.headers as never,
      body: first.body,
      nonces: new MemoryNonceStore(),
    });
    expect(forged).toEqual({ ok: false, reason: "bad-signature" });
  });

  it("the notification secret appears in no file of the run dir and in no gateway log", async () => {
    const scan = await gw().scanForSecret(secret);
    expect(scan.filesRead).toBeGreaterThan(0);
    expect(scan.matches).toEqual([]);
  });

  it("the gateway token appears in no file of the run dir other than the config and openclaw's backups of it", async () => {
    const scan = await gw().scanForSecret(token);
    expect(scan.filesRead).toBeGreaterThan(0);
    expect(scan.matches.filter((f) => !/^state\/openclaw\.json(\.bak(\.\d+)?|\.last-good)?$/.test(f))).toEqual([]);
  });
});
