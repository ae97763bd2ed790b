import { describe, expect, it } from "vitest";
import { connect, raw, SDKS, useEmulator } from "./harness.js";

const emulator = useEmulator();

const countLines = async (sandbox: { runCommand(c: string, a: string[]): Promise<{ stdout(): Promise<string> }> }) =>
  (await (await sandbox.runCommand("bash", ["-c", "wc -l < /vercel/sandbox/side-effect"])).stdout()).trim();

describe.each(SDKS)("fault injection with SDK %s", (_version, { Sandbox }) => {
  it("a 500 on POST /cmd is retried by the SDK and the command runs once", async () => {
    const api = emulator();
    const sandbox = await Sandbox.create(connect(api));
    const before = api.requests().length;
    api.faults.inject({ method: "POST", path: "/cmd", status: 500 });
    const result = await sandbox.runCommand("bash", ["-c", "echo x >> /vercel/sandbox/side-effect"]);
    expect(result.exitCode).toBe(0);
    const cmdCalls = api
      .requests()
      .slice(before)
      .filter((r) => r.path.endsWith("/cmd"));
    expect(cmdCalls.map((r) => r.status)).toEqual([500, 200]);
    expect(await countLines(sandbox)).toBe("1");
    await sandbox.delete();
  });

  it("commit-then-drop on POST /cmd leaves the side effect, and the SDK's retry runs the command again", async () => {
    const api = emulator();
    const sandbox = await Sandbox.create(connect(api));
    const before = api.requests().length;
    api.faults.inject({ method: "POST", path: "/cmd", dropAfterCommit: true });
    await sandbox.runCommand("bash", ["-c", "echo x >> /vercel/sandbox/side-effect"]);
    const cmdCalls = api
      .requests()
      .slice(before)
      .filter((r) => r.path.endsWith("/cmd"));
    expect(cmdCalls.map((r) => r.status)).toEqual([0, 200]);
    expect(await countLines(sandbox)).toBe("2");
    await sandbox.delete();
  });

  it("a 429 with Retry-After is retried; resets exhaust the SDK's three attempts", async () => {
    const api = emulator();
    const sandbox = await Sandbox.create(connect(api));
    api.faults.inject({ path: /\/fs\/write$/, status: 429, retryAfterS: 0 });
    await sandbox.writeFiles([{ path: "after-429.txt", content: Buffer.from("ok") }]);
    expect((await sandbox.readFileToBuffer({ path: "after-429.txt" }))?.toString()).toBe("ok");
    api.faults.inject({ method: "POST", path: "/fs/read", reset: true, times: 3 });
    await expect(sandbox.readFileToBuffer({ path: "after-429.txt" })).rejects.toThrow();
    api.faults.inject({ method: "GET", path: "/fs/read", status: 500, times: 5 });
    expect((await sandbox.readFileToBuffer({ path: "after-429.txt" }))?.toString()).toBe("ok");
    api.faults.clear();
    await sandbox.delete();
  });

  it("added latency delays the response without failing it", async () => {
    const api = emulator();
    const before = api.requests().length;
    api.faults.inject({ method: "POST", path: "/v3/sandboxes", delayMs: 300 });
    const sandbox = await Sandbox.create(connect(api));
    const create = api
      .requests()
      .slice(before)
      .find((r) => r.path === "/v3/sandboxes");
    expect(create!.ms).toBeGreaterThanOrEqual(300);
    await sandbox.delete();
  });
});

describe("error answers", () => {
  it("answer 404, 410 and 400 with the SDK's error body and keep serving", async () => {
    const api = emulator();
    const { Sandbox } = SDKS[1]![1];
    expect((await raw(api, "GET", "/v2/sandboxes/no-such-box")).json.error?.code).toBe("not_found");
    expect((await raw(api, "GET", "/v2/sandboxes/no-such-box")).status).toBe(404);
    expect((await raw(api, "POST", "/v2/sandboxes/sessions/sbx_missing/cmd", "{}")).status).toBe(404);
    expect((await raw(api, "GET", "/v9/unknown")).status).toBe(404);
    expect((await raw(api, "POST", "/v3/sandboxes", "{not json")).status).toBe(400);
    expect((await raw(api, "POST", "/v3/sandboxes", "[1,2]")).status).toBe(400);
    expect(
      (
        await raw(
          api,
          "POST",
          "/v3/sandboxes",
          JSON.stringify({ projectId: api.credentials.projectId, timeout: "soon" }),
        )
      ).status,
    ).toBe(400);
    const sandbox = await Sandbox.create(connect(api));
    const sid = sandbox.currentSession().sessionId;
    expect((await raw(api, "POST", `/v2/sandboxes/sessions/${sid}/cmd`, JSON.stringify({ command: 42 }))).status).toBe(
      400,
    );
    expect((await raw(api, "POST", `/v2/sandboxes/sessions/${sid}/fs/write`, "not gzip")).status).toBe(400);
    expect(
      (
        await raw(
          api,
          "POST",
          "/v3/sandboxes",
          JSON.stringify({ projectId: api.credentials.projectId, name: sandbox.name }),
        )
      ).status,
    ).toBe(409);
    await sandbox.stop();
    const stopped = await raw(api, "POST", `/v2/sandboxes/sessions/${sid}/cmd`, JSON.stringify({ command: "true" }));
    expect(stopped.status).toBe(410);
    expect(
      (await raw(api, "POST", `/v2/sandboxes/sessions/${sid}/fs/read`, JSON.stringify({ path: "x" }))).status,
    ).toBe(410);
    expect((await raw(api, "POST", `/v2/sandboxes/sessions/${sid}/stop`)).status).toBe(200);
    expect((await sandbox.runCommand("true")).exitCode).toBe(0);
    await sandbox.delete();
  });
});
