// Allocation authority (OpenClaw 2026.9.6's `options.assertCurrent`): a provision whose host assertion no longer
// holds allocates nothing and adopts nothing; one whose assertion holds provisions as before; and a host that
// passes none (2026.9.2 to 9.5) provisions as before too.
import { Sandbox } from "@vercel/sandbox";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { enrollingOptions, operationId } from "../../src/conformance/fixtures.js";
import { type LocalSandboxApi, startLocalSandboxApi } from "../../src/emulator/index.js";
import { createVercelSandboxProvider, type VercelSandboxProvider } from "../../src/provider/index.js";

class StaleOwnerError extends Error {
  override readonly name = "StaleOwnerError";
}

let api: LocalSandboxApi;
let provider: VercelSandboxProvider;
let profile: Record<string, string>;

const creates = () => api.requests().filter((r) => r.method === "POST" && /^\/v[23]\/sandboxes\/?$/.test(r.path));

beforeAll(async () => {
  api = await startLocalSandboxApi();
  profile = {
    apiUrl: api.url,
    tokenEnv: "AUTHORITY_TOKEN",
    teamId: api.credentials.teamId,
    projectId: api.credentials.projectId,
  };
  provider = createVercelSandboxProvider({
    env: { AUTHORITY_TOKEN: api.credentials.token },
    logger: { warn: () => undefined },
    scope: "authority",
    enroll: async ({ enrollment }) => enrollment.waitForDeviceId(),
  });
});
afterAll(async () => {
  await provider.dispose();
  await api.close();
});

describe("allocation authority", () => {
  it("a stale owner's provision creates no sandbox and fails with the host's error", async () => {
    const before = creates().length;
    let asked = 0;
    const options = {
      ...enrollingOptions(),
      assertCurrent: () => {
        asked += 1;
        throw new StaleOwnerError("the environment has a newer owner");
      },
    };
    await expect(provider.provision(profile, operationId(), options)).rejects.toThrow(/newer owner/);
    expect(asked).toBeGreaterThan(0);
    expect(creates().length).toBe(before);
    expect(await (await Sandbox.list({ ...api.credentials, fetch: api.fetch })).toArray()).toEqual([]);
  });

  it("a current owner's provision and a host without the assertion both yield a worker", async () => {
    let asked = 0;
    const current = {
      ...enrollingOptions(),
      assertCurrent: () => {
        asked += 1;
      },
    };
    const op = operationId();
    const lease = await provider.provision(profile, op, current);
    expect(asked).toBeGreaterThan(0);
    expect(lease.node?.deviceId).toBeTruthy();
    const legacy = await provider.provision(profile, operationId(), enrollingOptions());
    expect(legacy.node?.deviceId).toBeTruthy();
    for (const { leaseId } of [lease, legacy]) await provider.destroy({ leaseId, profile });
  });
});
