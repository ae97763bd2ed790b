// The host library's GatewayClient over real HTTP against the plugin's real routes and Suspender (a stand-in
// gateway behind dispatch, bearer check in front, as the gateway does; the plugin side records every suspend it
// receives): suspend retries busy and draining with the same requestId until ready; it gives up at its deadline
// and releases a draining lease; an abort at any point rejects with SuspendAbortedError and leaves admission
// open; errors carry the status, never the token.
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { GatewayClient, GatewayHttpError, SuspendAbortedError } from "../../src/host/index.js";
import { ROUTES, type SuspendResult } from "../../src/protocol/protocol.js";
import type { IdleClock } from "../../src/suspend/clock.js";
import { waitFor } from "../gateway/wait.js";
import type { fakeGateway } from "./fake-gateway.js";
import { type PluginServer, servePlugin } from "./plugin-server.js";

const TOKEN = "client-spec-gateway-token-5a4b3c2d1e";
let plugin: PluginServer;
let baseUrl: string;
let gateway: ReturnType<typeof fakeGateway>;
let clock: IdleClock;
let received: PluginServer["received"];
let paths: string[];

async function serve(idleMs: number) {
  plugin = await servePlugin({ token: TOKEN, idleMs });
  ({ baseUrl, gateway, clock, received, paths } = plugin);
}
const holdNext = (method: string) => plugin.holdNext(method);

const answered = (status: SuspendResult["status"]) => received.filter((r) => r.answer?.status === status).length;
const until = (what: string, check: () => boolean) =>
  waitFor(what, async () => (check() ? true : undefined), { timeoutMs: 20_000, intervalMs: 5 });

/** Admission is open: the plugin holds no lease, the gateway none, and another host's suspend is admitted. */
async function expectAdmissionOpen(client: GatewayClient) {
  expect((await client.status()).suspension).toEqual({ phase: "running" });
  expect(gateway.state.lease).toBeUndefined();
  expect(await client.suspendOnce("another-host-op")).toMatchObject({ status: "ready" });
}

beforeEach(() => serve(0));
afterEach(() => plugin.close());

describe("host GatewayClient", () => {
  it("status returns the resident's status, validated against the protocol schema", async () => {
    const status = await new GatewayClient({ baseUrl, token: TOKEN }).status();
    expect(status).toMatchObject({ instanceId: "i", suspension: { phase: "running" }, workers: [] });
  });

  it("suspend keeps one requestId through busy → ready and draining → ready, on every call the plugin received", {
    timeout: 30_000,
  }, async () => {
    clock.turnStarted("run-1"); // a turn in flight: the plugin's own clock answers busy (activity)
    gateway.state.activeWork = 1; // once prepared, the gateway drains this work: draining
    const pending = new GatewayClient({ baseUrl, token: TOKEN }).suspend({ requestId: "host-1", deadlineMs: 60_000 });
    await until("two busy answers", () => answered("busy") >= 2);
    clock.turnEnded("run-1", false);
    await until("two draining answers", () => answered("draining") >= 2);
    gateway.state.activeWork = 0;
    const result = await pending;

    expect(result).toMatchObject({ status: "ready", suspensionId: "susp-1" });
    const statuses = received.map((r) => r.answer?.status);
    expect(statuses.slice(0, 2)).toEqual(["busy", "busy"]);
    expect(statuses).toContain("draining");
    expect(statuses.at(-1)).toBe("ready");
    expect(new Set(received.map((r) => r.requestId))).toEqual(new Set(["host-1"]));
    const prepares = gateway.state.calls.filter((c) => c.method === "gateway.suspend.prepare");
    expect(prepares.map((c) => c.params)).toEqual(prepares.map(() => ({ requestId: "host-1", drain: true })));
  });

  it("gives up when the next try would pass its deadline, and resumes a draining lease so admission reopens", async () => {
    gateway.state.activeWork = 1;
    const client = new GatewayClient({ baseUrl, token: TOKEN });
    const result = await client.suspend({ deadlineMs: 1_000 });
    expect(result).toMatchObject({ status: "draining", retryAfterMs: 2_000 });
    expect(gateway.state.lease).toBeUndefined();
    expect(gateway.methods()).toContain("gateway.suspend.resume");
  });

  it("returns busy at once when the deadline does not allow waiting", async () => {
    clock.turnStarted("run-1");
    const result = await new GatewayClient({ baseUrl, token: TOKEN }).suspend({ deadlineMs: 0 });
    expect(result).toMatchObject({ status: "busy", reason: "activity" });
  });

  it("a suspend request slower than the client's timeout is waited for while the deadline allows", async () => {
    // The route answers only after the gateway prepared (workers reclaimed): longer than a status call may take.
    const prepare = holdNext("gateway.suspend.prepare");
    const quick = new GatewayClient({ baseUrl, token: TOKEN, timeoutMs: 300 });
    const pending = quick.suspend({ requestId: "slow-1", deadlineMs: 30_000 });
    await prepare.inside;
    await new Promise((resolve) => setTimeout(resolve, 3_000)); // ten of the client's timeouts (undici checks them every second or so)
    prepare.release();
    expect(await pending).toMatchObject({ status: "ready" });
    expect(received.map((r) => r.requestId)).toEqual(["slow-1"]);
  });

  it("resume returns whether a lease was resumed", async () => {
    const client = new GatewayClient({ baseUrl, token: TOKEN });
    const ready = await client.suspend();
    if (ready.status !== "ready") throw new Error(`expected ready, got ${ready.status}`);
    expect(await client.resume(ready.suspensionId)).toEqual({ status: "running", resumed: true });
    expect(await client.resume(ready.suspensionId)).toEqual({ status: "running", resumed: false });
  });

  it("a refused call throws GatewayHttpError with the status and without the token", async () => {
    const wrong = `${TOKEN}-wrong`;
    const error = await new GatewayClient({ baseUrl, token: wrong }).status().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(GatewayHttpError);
    expect((error as GatewayHttpError).status).toBe(401);
    expect(String((error as Error).message)).not.toContain(wrong);
  });
});

describe("GatewayClient.suspend aborted", () => {
  const client = () => new GatewayClient({ baseUrl, token: TOKEN });

  /** Starts a suspend, lets `abortWhen` abort it at its chosen point, and returns what the suspend rejected with. */
  async function aborted(requestId: string, abortWhen: (abort: () => void) => Promise<void>) {
    const controller = new AbortController();
    const pending = client()
      .suspend({ requestId, signal: controller.signal })
      .catch((e: unknown) => e);
    await abortWhen(() => controller.abort());
    const error = await pending;
    expect(error).toBeInstanceOf(SuspendAbortedError);
    return error as SuspendAbortedError;
  }

  it("before the first request: rejects with SuspendAbortedError and sends nothing", async () => {
    const error = await client()
      .suspend({ requestId: "abort-0", signal: AbortSignal.abort() })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(SuspendAbortedError);
    expect(error).toMatchObject({ name: "AbortError", requestId: "abort-0", released: "nothing-sent" });
    expect(received).toEqual([]);
    await expectAdmissionOpen(client());
  });

  it("during the request, while the gateway prepares: the lease it takes is resumed", async () => {
    const prepare = holdNext("gateway.suspend.prepare");
    const error = await aborted("abort-1", async (abort) => {
      await prepare.inside;
      abort();
      // The client asks status while the aborted suspend is still preparing: status must wait for it.
      await until("the client's status request", () => paths.includes(ROUTES.status));
      prepare.release();
    });
    expect(error).toMatchObject({ requestId: "abort-1", released: "resumed" });
    expect(received.map((r) => r.answer?.status)).toEqual(["ready"]); // the plugin did take the lease
    await expectAdmissionOpen(client());
  });

  it("during the retry sleep after busy: rejects, and nothing was taken", async () => {
    clock.turnStarted("run-1");
    const error = await aborted("abort-2", async (abort) => {
      await until("a busy answer", () => answered("busy") >= 1);
      abort();
    });
    expect(error).toMatchObject({ requestId: "abort-2", released: "nothing-held" });
    expect(gateway.methods()).not.toContain("gateway.suspend.prepare");
    clock.turnEnded("run-1", false);
    await expectAdmissionOpen(client());
  });

  it("during the retry sleep after a draining answer: the draining lease is resumed", async () => {
    gateway.state.activeWork = 1;
    const error = await aborted("abort-3", async (abort) => {
      await until("a draining answer", () => answered("draining") >= 1);
      abort();
    });
    expect(error).toMatchObject({ requestId: "abort-3", released: "resumed" });
    expect(gateway.methods()).toContain("gateway.suspend.resume");
    gateway.state.activeWork = 0;
    await expectAdmissionOpen(client());
  });

  it("during a draining poll request: the draining lease is resumed", { timeout: 30_000 }, async () => {
    gateway.state.activeWork = 1;
    const error = await aborted("abort-4", async (abort) => {
      await until("a draining answer", () => answered("draining") >= 1);
      const poll = holdNext("gateway.suspend.status");
      await poll.inside;
      abort();
      await until("the client's status request", () => paths.includes(ROUTES.status));
      poll.release();
    });
    expect(error).toMatchObject({ requestId: "abort-4", released: "resumed" });
    expect(received.map((r) => r.answer?.status)).toEqual(["draining", "draining"]);
    gateway.state.activeWork = 0;
    await expectAdmissionOpen(client());
  });
});
