// Runs the published conformance suite against the embedded emulator, once per supported SDK version.
// The profile reaches the emulator the way a user's would reach Vercel: `apiUrl` plus a token referenced
// by environment variable name, resolved by the provider at call time.
import { defineConformanceSuite } from "../../src/conformance/index.js";
import { startLocalSandboxApi } from "../../src/emulator/index.js";
import { createVercelSandboxProvider } from "../../src/provider/index.js";
import { SDKS } from "../emulator/harness.js";

const quiet = { warn: () => undefined };

for (const [version, sdk] of SDKS) {
  defineConformanceSuite(`emulator with @vercel/sandbox ${version}`, async () => {
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
  });
}
