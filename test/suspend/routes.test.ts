// The three routes over real HTTP (node:http in front of the handlers, as the gateway puts them) with a
// stand-in gateway behind dispatch: methods, bounded bodies, the suspend recheck, reclaim, idempotency,
// concurrent suspends and resume. Gateway auth (401) is the gateway's and is specified against the real one.
import http from "node:http";
import type { AddressInfo } from "node:net";
import { Value } from "@sinclair/typebox/value";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { MAX_BODY_BYTES, ROUTES, StatusResultSchema } from "../../src/protocol/protocol.js";
import { IdleClock } from "../../src/suspend/clock.js";
import { createRoutes } from "../../src/suspend/routes.js";
import { Suspender } from "../../src/suspend/suspender.js";
import { fakeGateway } from "./fake-gateway.js";

const IDLE_MS = 45 * 60_000;
let time = 1_800_000_000_000;
let server: http.Server;
let base: string;
let gateway: ReturnType<typeof fakeGateway>;
let clock: IdleClock;

beforeEach(async () => {
  time = 1_800_000_000_000;
  clock = new IdleClock(() => time);
  gateway = fakeGateway();
  const suspender = new Suspender({
    clock,
    policy: { idleMs: IDLE_MS, deadlineMarginMs: 0 },
    providerId: "vercel-sandbox",
    instanceId: "instance-1",
  });
  const routes = createRoutes(suspender, gateway.dispatch);
  const byPath: Record<string, (typeof routes)["status"]> = {
    [ROUTES.status]: routes.status,
    [ROUTES.suspend]: routes.suspend,
    [ROUTES.resume]: routes.resume,
  };
  server = http.createServer((req, res) => void byPath[req.url ?? ""]?.(req, res));
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterEach(async () => {
  await new Promise((resolve) => server.close(resolve));
});

async function send(path: string, method: string, body?: string) {
  const response = await fetch(`${base}${path}`, {
    method,
    ...(body === undefined ? {} : { body, headers: { "content-type": "application/json" } }),
  });
  // biome-ignore lint/suspicious/noExplicitAny: JSON answers of several shapes; each spec asserts the one it expects
  const answer = (await response.json()) as any;
  return { status: response.status, allow: response.headers.get("allow"), body: answer };
}
const post = (path: string, value: unknown) => send(path, "POST", JSON.stringify(value));
const idle = () => {
  time += IDLE_MS;
};

describe("routes: methods and bodies", () => {
  it.each([
    [ROUTES.status, "POST", "GET"],
    [ROUTES.suspend, "GET", "POST"],
    [ROUTES.resume, "PUT", "POST"],
  ])("%s answers %s with 405 naming the allowed method", async (path, method, allowed) => {
    const result = await send(path, method, method === "GET" ? undefined : "{}");
    expect(result.status).toBe(405);
    expect(result.allow).toBe(allowed);
  });

  it.each([
    ["not JSON", "{requestId:"],
    ["an empty body", ""],
    ["no requestId", "{}"],
    ["an empty requestId", '{"requestId":"  "}'],
    ["a requestId over 128 characters", JSON.stringify({ requestId: "x".repeat(129) })],
    ["an unknown key", '{"requestId":"a","force":true}'],
    ["an array", "[]"],
  ])("suspend with %s is a 400 and reaches no gateway method", async (_what, body) => {
    const result = await send(ROUTES.suspend, "POST", body);
    expect(result.status).toBe(400);
    expect(result.body.error.type).toBe("invalid_request");
    expect(gateway.state.calls).toEqual([]);
  });

  it("an oversized body is a 413", async () => {
    const result = await send(ROUTES.suspend, "POST", JSON.stringify({ requestId: "a".repeat(MAX_BODY_BYTES) }));
    expect(result.status).toBe(413);
    expect(gateway.state.calls).toEqual([]);
  });
});

describe("routes: status", () => {
  it("reports the clock, our workers only, and that nothing is suspended; polling never resets the clock", async () => {
    gateway.state.environments = [
      { id: "env-ours", worker: { providerId: "vercel-sandbox", state: "attached", attachedSessionIds: ["s1"] } },
      { id: "env-other", worker: { providerId: "crabbox", state: "idle", attachedSessionIds: [] } },
    ];
    time += 10_000;
    const first = await send(ROUTES.status, "GET");
    expect(first.status).toBe(200);
    expect(Value.Check(StatusResultSchema, first.body)).toBe(true);
    expect(first.body).toMatchObject({
      instanceId: "instance-1",
      idleMs: 10_000,
      idleAfterMs: IDLE_MS,
      activeTurns: 0,
      suspension: { phase: "running" },
      workers: [{ environmentId: "env-ours", state: "attached", sessions: ["s1"] }],
    });
    time += IDLE_MS;
    const second = await send(ROUTES.status, "GET");
    expect(second.body.lastActivityMs).toBe(first.body.lastActivityMs);
    expect(second.body.due).toBe("idle");
  });
});

describe("routes: suspend", () => {
  it("answers busy (activity) before the idle interval, with the time left as retryAfterMs, touching no gateway method", async () => {
    time += IDLE_MS - 5_000;
    const result = await post(ROUTES.suspend, { requestId: "r1" });
    expect(result).toMatchObject({ status: 200, body: { status: "busy", reason: "activity", retryAfterMs: 5_000 } });
    expect(gateway.state.calls).toEqual([]);
  });

  it("answers busy while a turn is active, even after the interval", async () => {
    clock.turnStarted("run-1");
    idle();
    expect((await post(ROUTES.suspend, { requestId: "r1" })).body).toMatchObject({
      status: "busy",
      reason: "activity",
    });
  });

  it("when idle: reclaims our workers first, then prepares with drain and answers ready; status shows the lease", async () => {
    gateway.state.sessions = [{ key: "agent:main:a", sessionId: "sess-a", agentId: "main" }];
    gateway.state.environments = [
      { id: "env-1", worker: { providerId: "vercel-sandbox", state: "attached", attachedSessionIds: ["sess-a"] } },
      { id: "env-2", worker: { providerId: "vercel-sandbox", state: "idle", attachedSessionIds: [] } },
      { id: "env-3", worker: { providerId: "vercel-sandbox", state: "destroyed", attachedSessionIds: [] } },
      { id: "env-4", worker: { providerId: "crabbox", state: "idle", attachedSessionIds: [] } },
    ];
    idle();
    const result = await post(ROUTES.suspend, { requestId: "r1" });
    expect(result.body).toEqual({ status: "ready", suspensionId: "susp-1", expiresAtMs: expect.any(Number) });
    expect(gateway.state.calls).toEqual([
      { method: "environments.list", params: {} },
      { method: "sessions.list", params: {} },
      { method: "sessions.reclaim", params: { key: "agent:main:a", agentId: "main" } },
      { method: "environments.destroy", params: { environmentId: "env-2" } },
      { method: "environments.list", params: {} },
      { method: "gateway.suspend.prepare", params: { requestId: "r1", drain: true } },
    ]);
    const status = await send(ROUTES.status, "GET");
    expect(status.body.suspension).toEqual({
      phase: "ready",
      requestId: "r1",
      suspensionId: "susp-1",
      expiresAtMs: result.body.expiresAtMs,
    });
    expect(status.body.workers).toBeNull();
  });

  it("a worker attached to a session the gateway does not list is destroyed instead of reclaimed by key", async () => {
    gateway.state.environments = [
      { id: "env-1", worker: { providerId: "vercel-sandbox", state: "attached", attachedSessionIds: ["sess-gone"] } },
    ];
    idle();
    expect((await post(ROUTES.suspend, { requestId: "r1" })).body).toMatchObject({ status: "ready" });
    expect(gateway.state.calls.map((c) => c.method)).toContain("environments.destroy");
    expect(gateway.methods()).not.toContain("sessions.reclaim");
  });

  it("a worker that cannot be reclaimed answers busy (reclaim) and does not prepare", async () => {
    gateway.state.sessions = [{ key: "agent:main:s", sessionId: "s", agentId: "main" }];
    gateway.state.environments = [
      { id: "env-1", worker: { providerId: "vercel-sandbox", state: "attached", attachedSessionIds: ["s"] } },
    ];
    gateway.state.failing.add("sessions.reclaim");
    idle();
    expect((await post(ROUTES.suspend, { requestId: "r1" })).body).toMatchObject({ status: "busy", reason: "reclaim" });
    expect(gateway.methods()).not.toContain("gateway.suspend.prepare");
  });

  it("a teardown the gateway has only started makes it wait (busy, reclaim) until the worker is gone", async () => {
    gateway.state.environments = [
      { id: "env-1", worker: { providerId: "vercel-sandbox", state: "idle", attachedSessionIds: [] } },
    ];
    gateway.state.slowDestroy = true;
    idle();
    expect((await post(ROUTES.suspend, { requestId: "r1" })).body).toMatchObject({ status: "busy", reason: "reclaim" });
    expect(gateway.methods()).not.toContain("gateway.suspend.prepare");
    gateway.state.environments = [];
    expect((await post(ROUTES.suspend, { requestId: "r1" })).body).toMatchObject({ status: "ready" });
  });

  it("a worker already being released makes it wait (busy, reclaim)", async () => {
    gateway.state.environments = [
      { id: "env-1", worker: { providerId: "vercel-sandbox", state: "destroying", attachedSessionIds: [] } },
    ];
    idle();
    expect((await post(ROUTES.suspend, { requestId: "r1" })).body).toMatchObject({ status: "busy", reason: "reclaim" });
  });

  it("active gateway work gives draining, with a short poll hint and the gateway's active count and blockers", async () => {
    gateway.state.activeWork = 1;
    idle();
    expect((await post(ROUTES.suspend, { requestId: "r1" })).body).toMatchObject({
      status: "draining",
      suspensionId: "susp-1",
      retryAfterMs: 2_000,
      activeCount: 1,
      blockers: ["1 chat run(s)"],
    });
  });

  it("asking again about a draining lease polls status (no prepare) until the work ends, then renews it as ready", async () => {
    gateway.state.activeWork = 1;
    idle();
    await post(ROUTES.suspend, { requestId: "r1" });
    expect((await post(ROUTES.suspend, { requestId: "r1" })).body).toMatchObject({ status: "draining" });
    gateway.state.activeWork = 0;
    expect((await post(ROUTES.suspend, { requestId: "r1" })).body).toMatchObject({
      status: "ready",
      suspensionId: "susp-1",
    });
    expect(gateway.methods().filter((m) => m.startsWith("gateway.suspend."))).toEqual([
      "gateway.suspend.prepare",
      "gateway.suspend.status",
      "gateway.suspend.status",
      "gateway.suspend.prepare",
    ]);
  });

  it("the same requestId is idempotent: it renews the same lease, without a second recheck or reclaim", async () => {
    idle();
    const first = await post(ROUTES.suspend, { requestId: "r1" });
    clock.touch("message"); // cannot happen while prepared, but must not turn a renewal into busy
    const second = await post(ROUTES.suspend, { requestId: "r1" });
    expect(second.body).toMatchObject({ status: "ready", suspensionId: first.body.suspensionId });
    expect(gateway.methods().filter((m) => m === "environments.list")).toHaveLength(1);
    expect(gateway.methods().filter((m) => m === "gateway.suspend.prepare")).toHaveLength(2);
  });

  it("concurrent suspends with different requestIds: exactly one lease is ready, the others are busy", async () => {
    idle();
    const results = await Promise.all(["a", "b", "c", "d"].map((requestId) => post(ROUTES.suspend, { requestId })));
    const bodies = results.map((r) => r.body);
    expect(bodies.filter((b) => b.status === "ready")).toHaveLength(1);
    expect(bodies.filter((b) => b.status === "busy" && b.reason === "gateway")).toHaveLength(3);
    expect(new Set(bodies.filter((b) => b.status === "ready").map((b) => b.suspensionId)).size).toBe(1);
  });
});

describe("routes: resume", () => {
  it("resumes the lease, reopens status to running and starts a fresh idle clock", async () => {
    idle();
    const ready = await post(ROUTES.suspend, { requestId: "r1" });
    const result = await post(ROUTES.resume, { suspensionId: ready.body.suspensionId });
    expect(result).toMatchObject({ status: 200, body: { status: "running", resumed: true } });
    const status = await send(ROUTES.status, "GET");
    expect(status.body).toMatchObject({ suspension: { phase: "running" }, idleMs: 0 });
    expect(status.body.due).toBeUndefined();
    expect((await post(ROUTES.resume, { suspensionId: ready.body.suspensionId })).body.resumed).toBe(false);
  });

  it("another suspensionId while a lease is held is a 400 from the gateway, and the lease stays", async () => {
    idle();
    await post(ROUTES.suspend, { requestId: "r1" });
    const result = await post(ROUTES.resume, { suspensionId: "someone-else" });
    expect(result.status).toBe(400);
    expect(result.body.error.message).toContain("does not match");
    expect((await send(ROUTES.status, "GET")).body.suspension.phase).toBe("ready");
  });

  it("a resume body without suspensionId is a 400", async () => {
    expect((await post(ROUTES.resume, { requestId: "x" })).status).toBe(400);
  });
});
