// The resident timer and its notifier against a real HTTP host on loopback that verifies with the host library:
// a due clock notifies once with a signed notification the host accepts; a fence notifies without waiting for
// idle; 5xx is retried, 4xx is not; a missing secret variable is named, and the secret is never in an error.
import http from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { MemoryNonceStore, type VerifyResult, verifyNotification } from "../../src/host/index.js";
import type { Notification } from "../../src/protocol/protocol.js";
import { IdleClock } from "../../src/suspend/clock.js";
import { notifyHost } from "../../src/suspend/notifier.js";
import { Resident } from "../../src/suspend/resident.js";

const SECRET = "resident-spec-secret-9f8e7d6c5b4a";
const SECRET_ENV = "VSB_SPEC_NOTIFY_SECRET";
const IDLE_MS = 45 * 60_000;

let server: http.Server;
let url: string;
let answers: number[];
let received: VerifyResult[];
const nonces = new MemoryNonceStore();

beforeEach(async () => {
  answers = [];
  received = [];
  server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", async () => {
      const body = Buffer.concat(chunks).toString("utf8");
      received.push(await verifyNotification({ secret: SECRET, headers: req.headers as never, body, nonces }));
      res.statusCode = answers.shift() ?? 204;
      res.end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/notify`;
});

afterEach(async () => {
  await new Promise((resolve) => server.close(resolve));
});

function resident(
  clock: IdleClock,
  env: NodeJS.ProcessEnv = { [SECRET_ENV]: SECRET },
  minTimeoutMs = 10,
  deadline: { deadlineAtMs?: number; deadlineMarginMs: number } = { deadlineMarginMs: 0 },
) {
  const logs: string[] = [];
  const r = new Resident({
    clock,
    policy: { idleMs: IDLE_MS, ...deadline },
    instanceId: "instance-1",
    pollMs: 60_000,
    renotifyMs: 60_000,
    logger: { info: (m) => logs.push(m), warn: (m) => logs.push(m) },
    notify: (n, signal) => notifyHost(n, { url, secretEnv: SECRET_ENV, env, signal, minTimeoutMs, retries: 2 }),
  });
  return { r, logs };
}

describe("resident timer", () => {
  it("says nothing while not idle, then notifies once with a notification the host library accepts", async () => {
    let now = 1_800_000_000_000;
    const clock = new IdleClock(() => now);
    const { r } = resident(clock);
    await r.poll();
    expect(received).toEqual([]);
    now += IDLE_MS;
    await r.poll();
    await r.poll(); // within renotifyMs: no second notification
    expect(received).toHaveLength(1);
    expect(received[0]).toEqual({
      ok: true,
      notification: {
        version: 1,
        reason: "idle",
        instanceId: "instance-1",
        sentAtMs: now,
        lastActivityMs: now - IDLE_MS,
      } satisfies Notification,
    });
  });

  it("a failed turn notifies with reason fenced on the next poll, without waiting for the idle interval", async () => {
    const clock = new IdleClock();
    const { r } = resident(clock);
    clock.turnStarted("run-1");
    clock.turnEnded("run-1", true);
    await r.poll();
    expect(received.map((v) => v.ok && v.notification.reason)).toEqual(["fenced"]);
  });

  it("the deadline margin notifies with reason deadline even with recent activity and a turn in flight", async () => {
    let now = 1_800_000_000_000;
    const clock = new IdleClock(() => now);
    const deadlineAtMs = now + 45 * 60_000;
    const { r } = resident(clock, { [SECRET_ENV]: SECRET }, 10, { deadlineAtMs, deadlineMarginMs: 5 * 60_000 });
    now += 40 * 60_000 - 1;
    clock.touch("message");
    clock.turnStarted("run-1");
    await r.poll();
    expect(received).toEqual([]);
    now += 1;
    await r.poll();
    expect(received).toEqual([
      {
        ok: true,
        notification: expect.objectContaining({ reason: "deadline", deadlineAtMs, lastActivityMs: now - 1 }),
      },
    ]);
  });

  it("retries a 503 with backoff and stops at a 400", async () => {
    const clock = new IdleClock();
    clock.turnEnded("x", true);
    answers = [503, 204];
    const first = resident(clock);
    await first.r.poll();
    expect(received).toHaveLength(2);
    expect(first.logs.join("\n")).toContain("notified the host (fenced)");
    answers = [400];
    const second = resident(clock);
    await second.r.poll();
    expect(received).toHaveLength(3);
    expect(second.logs.join("\n")).toContain("could not notify the host (fenced): host answered 400");
  });

  it("without the secret variable it names the variable, sends nothing, and the secret never appears in logs", async () => {
    const clock = new IdleClock();
    clock.turnEnded("x", true);
    const missing = resident(clock, {});
    await missing.r.poll();
    expect(received).toEqual([]);
    expect(missing.logs.join("\n")).toContain(`environment variable ${SECRET_ENV}`);
    answers = [500, 500, 500];
    const failing = resident(clock);
    await failing.r.poll();
    expect(failing.logs.join("\n")).not.toContain(SECRET);
  });

  it("stop() aborts a notification waiting to retry, without logging a failure", async () => {
    const clock = new IdleClock();
    clock.turnEnded("x", true);
    answers = [503];
    const { r, logs } = resident(clock, { [SECRET_ENV]: SECRET }, 600_000);
    r.start();
    const inFlight = r.poll();
    while (received.length === 0) await new Promise((resolve) => setTimeout(resolve, 5));
    await r.stop();
    await inFlight;
    expect(received).toHaveLength(1);
    expect(logs).toEqual([]);
  });
});
