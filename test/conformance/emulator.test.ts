// Runs the published conformance suite against the embedded emulator, once per supported SDK version.
// The profile reaches the emulator the way a user's would reach Vercel: `apiUrl` plus a token referenced
// by environment variable name, resolved by the provider at call time. This target has every optional hook
// (request counting, fault injection, vCPUs in the listing), so no conformance spec may skip here.
import { describe, expect, it } from "vitest";
import { type ConformanceTarget, defineConformanceSuite } from "../../src/conformance/index.js";
import { startLocalSandboxApi } from "../../src/emulator/index.js";
import { createVercelSandboxProvider } from "../../src/provider/index.js";
import { SDKS, type Sdk } from "../emulator/harness.js";

const quiet = { warn: () => undefined };

async function emulatorTarget(sdk: Sdk): Promise<ConformanceTarget> {
  const api = await startLocalSandboxApi();
  const env = { CONFORMANCE_VERCEL_TOKEN: api.credentials.token };
  const connection = { ...api.credentials, fetch: api.fetch };
  return {
    createProvider: (options) =>
      createVercelSandboxProvider({ sdk, env, logger: quiet, scope: "conformance", ...options }),
    profile: {
      apiUrl: api.url,
      tokenEnv: "CONFORMANCE_VERCEL_TOKEN",
      teamId: api.credentials.teamId,
      projectId: api.credentials.projectId,
      timeout: "5m",
    },
    sandboxes: async () =>
      (await (await sdk.Sandbox.list(connection)).toArray()).map((s) => ({
        name: s.name,
        status: s.status,
        vcpus: s.vcpus,
      })),
    stopSandbox: async (name) => {
      await (await sdk.Sandbox.get({ ...connection, name })).stop();
    },
    requestCount: () => api.requests().length,
    dropNextCreateResponse: () =>
      api.faults.inject({ method: "POST", path: /^\/v[23]\/sandboxes$/, dropAfterCommit: true }),
    secretToken: api.credentials.token,
    close: () => api.close(),
  };
}

for (const [version, sdk] of SDKS) {
  defineConformanceSuite(`emulator with @vercel/sandbox ${version}`, () => emulatorTarget(sdk));
}

describe("the emulator conformance target", () => {
  it("has every optional hook, so none of the suite's specs is skipped on it", async () => {
    const target = await emulatorTarget(SDKS[0]![1]);
    try {
      expect(typeof target.requestCount).toBe("function");
      expect(typeof target.dropNextCreateResponse).toBe("function");
      expect(target.secretToken).toBeTruthy();
      expect(target.requestCount?.()).toBe(0);
      expect(await target.sandboxes()).toEqual([]);
      // The listing call itself was counted: the counter observes the API, it is not a constant.
      expect(target.requestCount?.()).toBeGreaterThan(0);
    } finally {
      await target.close();
    }
  });
});
