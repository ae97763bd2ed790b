// The host library's GatewayClient over real HTTP against the routes (stand-in gateway behind them, bearer
// check in front, as the gateway does): suspend retries busy after retryAfterMs with the same requestId until
// ready; it gives up at its deadline and releases a draining lease; errors carry the status, never the token.
import http from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { GatewayClient, GatewayHttpError } from "../../src/host/index.js";
import { IdleClock } from "../../src/suspend/clock.js";
import { ROUTES } from "../../src/suspend/protocol.js";
import { createRoutes } from "../../src/suspend/routes.js";
import { Suspender } from "../../src/suspend/suspender.js";
import { fakeGateway } from "./fake-gateway.js";

const TOKEN = "client-spec-gateway-token-5a4b3c2d1e";
let server: http.Server;
let baseUrl: string;
let gateway: ReturnType<typeof fakeGateway>;
let clock: IdleClock;

async function serve(idleMs: number) {
  clock = new IdleClock();
  gateway = fakeGateway();
  const suspender = new Suspender({
    clock,
    policy: { idleMs, deadlineMarginMs: 0 },
    providerId: "vercel-sandbox",
    instanceId: "i",
  });
  const routes = createRoutes(suspender, gateway.dispatch);
  const byPath: Record<string, (typeof routes)["status"]> = {
    [ROUTES.status]: routes.status,
    [ROUTES.suspend]: routes.suspend,
    [ROUTES.resume]: routes.resume,
  };
  server = http.createServer((req, res) => {
    if (req.headers.authorization !== `Bearer ${TOKEN}`) {
      res.statusCode = 401;
      res.end(JSON.stringify({ error: { type: "unauthorized", message: "Unauthorized" } }));
      return;
    }
    void byPath[req.url ?? ""]?.(req, res);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

beforeEach(() => serve(0));
afterEach(async () => {
  await new Promise((resolve) => server.close(resolve));
});

describe("host GatewayClient", () => {
  it("status returns the resident's status, validated against the protocol schema", async () => {
    const status = await new GatewayClient({ baseUrl, token: TOKEN }).status();
    expect(status).toMatchObject({ instanceId: "i", suspension: { phase: "running" }, workers: [] });
  });

  it("suspend retries busy after retryAfterMs with the same requestId, until ready", async () => {
    await new Promise((resolve) => server.close(resolve));
    await serve(500);
    const result = await new GatewayClient({ baseUrl, token: TOKEN }).suspend({
      requestId: "host-1",
      deadlineMs: 30_000,
    });
    expect(result).toMatchObject({ status: "ready", suspensionId: "susp-1" });
    const prepares = gateway.state.calls.filter((c) => c.method === "gateway.suspend.prepare");
    expect(prepares).toEqual([{ method: "gateway.suspend.prepare", params: { requestId: "host-1", drain: true } }]);
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
