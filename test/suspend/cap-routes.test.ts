// The worker cap's `room` route (a host asks for room before it places a session or hands over a message no hook
// sees), served by a real HTTP server: POST only, a body of exactly one of { session } or { profileId } within
// bounds, the cap's outcome in the answer, and a gateway failure answered as such.
import http from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import type { RoomRequest } from "../../src/protocol/index.js";
import { CapGatewayError, CapService, createCapRoutes, type MakeRoom } from "../../src/suspend/cap-routes.js";

let server: http.Server | undefined;

afterEach(async () => {
  server?.closeAllConnections();
  await new Promise((resolve) => server?.close(resolve));
  server = undefined;
});

async function serve(makeRoom?: MakeRoom): Promise<string> {
  const routes = createCapRoutes(
    new CapService("vercel-sandbox", () => undefined),
    async () => ({ ok: false, error: { code: "UNUSED", message: "not called here" } }),
    makeRoom,
  );
  server = http.createServer((req, res) => void routes.room(req, res));
  await new Promise<void>((resolve) => server!.listen(0, "127.0.0.1", resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}/vercel-sandbox/v1/workers/room`;
}

async function post(url: string, body: string) {
  const response = await fetch(url, { method: "POST", headers: { "content-type": "application/json" }, body });
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

describe("the worker cap's room route", () => {
  it("answers the cap's outcome for a session or a profile, passing the request on as given", async () => {
    const asked: RoomRequest[] = [];
    const url = await serve(async (request) => {
      asked.push(request);
      return "session" in request ? "reclaimed" : "waited";
    });
    expect(await post(url, JSON.stringify({ session: "agent:main:b" }))).toEqual({
      status: 200,
      body: { outcome: "reclaimed" },
    });
    expect(await post(url, JSON.stringify({ profileId: "cap1" }))).toEqual({
      status: 200,
      body: { outcome: "waited" },
    });
    expect(asked).toEqual([{ session: "agent:main:b" }, { profileId: "cap1" }]);
  });

  it("refuses any other body with a 400 naming the shape, and never asks the cap", async () => {
    let asked = 0;
    const url = await serve(async () => {
      asked++;
      return "room";
    });
    for (const body of [
      "{}",
      "not json",
      JSON.stringify({ session: "" }),
      JSON.stringify({ session: "k".repeat(513) }),
      JSON.stringify({ session: "a", profileId: "b" }),
      JSON.stringify({ profileId: 7 }),
      JSON.stringify({ session: "a", extra: true }),
    ]) {
      const answer = await post(url, body);
      expect(answer.status, body).toBe(400);
      expect(JSON.stringify(answer.body), body).toMatch(/session.*profileId/);
    }
    expect(asked).toBe(0);
  });

  it("takes POST only", async () => {
    const url = await serve(async () => "room");
    const response = await fetch(url);
    expect(response.status).toBe(405);
    expect(response.headers.get("allow")).toBe("POST");
  });

  it("a gateway call that failed is a 502 naming it; no cap wired is `skipped`", async () => {
    const failing = await serve(async () => {
      throw new CapGatewayError("sessions.list failed (UNAVAILABLE): gateway restarting");
    });
    const answer = await post(failing, JSON.stringify({ profileId: "cap1" }));
    expect(answer).toEqual({
      status: 502,
      body: { error: { type: "gateway_error", message: "sessions.list failed (UNAVAILABLE): gateway restarting" } },
    });
    await new Promise((resolve) => server?.close(resolve));
    const unwired = await serve();
    expect(await post(unwired, JSON.stringify({ session: "agent:main:a" }))).toEqual({
      status: 200,
      body: { outcome: "skipped" },
    });
  });
});
