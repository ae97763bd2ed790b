// The performance record's specs. The replay round trips the bench reports are a behaviour of the provider,
// asserted here as counts against the emulator's request log; and `npm run bench` itself runs in a short mode
// so it cannot rot: its JSON has every figure, and the counts in it are the ones the provider promises.
// Nothing here asserts a time.
import { Sandbox } from "@vercel/sandbox";
import type { WorkerProfile } from "openclaw/plugin-sdk/plugin-entry";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { enrollingOptions, operationId } from "../src/conformance/fixtures.js";
import { type LocalSandboxApi, startLocalSandboxApi } from "../src/emulator/index.js";
import { sandboxNameOf } from "../src/provider/allocation.js";
import { createVercelSandboxProvider, type VercelSandboxProvider } from "../src/provider/index.js";

const CREATE = /^\/v[23]\/sandboxes$/;

describe("replay round trips", () => {
  let api: LocalSandboxApi;
  let profile: WorkerProfile;
  const providers: VercelSandboxProvider[] = [];
  const make = () => {
    const provider = createVercelSandboxProvider({
      env: { REPLAY_TOKEN: api.credentials.token },
      logger: { warn: () => undefined },
      scope: "replay",
      enroll: async ({ enrollment }) => enrollment.waitForDeviceId(),
    });
    providers.push(provider);
    return provider;
  };
  const since = (from: number) => api.requests().slice(from);

  beforeAll(async () => {
    api = await startLocalSandboxApi();
    profile = {
      apiUrl: api.url,
      tokenEnv: "REPLAY_TOKEN",
      teamId: api.credentials.teamId,
      projectId: api.credentials.projectId,
    };
  });
  afterAll(async () => {
    for (const p of providers) await p.dispose();
    await api?.close();
  });

  it("a replay of a running, enrolled lease in the process that enrolled it is one lookup and creates nothing", async () => {
    const provider = make();
    const op = operationId();
    const coldFrom = api.requests().length;
    const lease = await provider.provision(profile, op, enrollingOptions());
    // The cold path starts with the create: no lookup was added in front of it.
    const cold = since(coldFrom);
    expect(cold[0]).toMatchObject({ method: "POST", status: 200 });
    expect(cold[0]?.path).toMatch(CREATE);
    expect(cold.filter((r) => r.method === "GET")).toEqual([]);

    const replayFrom = api.requests().length;
    const options = enrollingOptions();
    const again = await provider.provision(profile, op, options);
    // With the stand-in enroller the node's check costs nothing, so the replay is the lookup alone: no create,
    // and the egress stays at its enrolled stage (no policy update).
    const replay = since(replayFrom);
    expect(replay.map((r) => `${r.method} ${r.status}`)).toEqual(["GET 200"]);
    expect(replay[0]?.path).toContain(sandboxNameOf(lease.leaseId));
    // The enroller still saw the replay's enrollment (a dead node is resumed, a live one adopted).
    expect(options.begun()).toBe(1);
    expect(again).toEqual({ ...lease, node: { deviceId: options.issued()[0]?.deviceId } });
    await provider.destroy({ leaseId: lease.leaseId, profile });
  });

  it("a replay after the enrolled sandbox stopped falls back to the full provision and still converges on one sandbox", async () => {
    const provider = make();
    const op = operationId();
    const lease = await provider.provision(profile, op, enrollingOptions());
    const name = sandboxNameOf(lease.leaseId);
    await (await Sandbox.get({ ...api.credentials, fetch: api.fetch, name })).stop();
    const from = api.requests().length;
    const options = enrollingOptions();
    const again = await provider.provision(profile, op, options);
    expect(again.leaseId).toBe(lease.leaseId);
    expect(options.begun()).toBe(1);
    expect(again.node?.deviceId).toBe(options.issued()[0]?.deviceId);
    expect(since(from).filter((r) => r.method === "POST" && CREATE.test(r.path) && r.status === 200)).toEqual([]);
    expect((await Sandbox.get({ ...api.credentials, fetch: api.fetch, name })).status).toBe("running");
    await provider.destroy({ leaseId: lease.leaseId, profile });
  });

  it("a replay in a new process, which enrolled nothing, still tries the create first and adopts", async () => {
    const first = make();
    const op = operationId();
    const lease = await first.provision(profile, op, enrollingOptions());
    const restarted = make();
    const from = api.requests().length;
    expect((await restarted.provision(profile, op, enrollingOptions())).leaseId).toBe(lease.leaseId);
    const replay = since(from);
    expect(replay[0]?.path).toMatch(CREATE);
    expect(replay[0]?.status).toBe(409);
    await restarted.destroy({ leaseId: lease.leaseId, profile });
  });
});
