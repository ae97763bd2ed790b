// The conformance suite against a real Vercel project. Opt-in: VERCEL_SANDBOX_LIVE=1 with VERCEL_TOKEN,
// VERCEL_TEAM_ID and VERCEL_PROJECT_ID in the environment (`npm run test:live`). Everything it creates carries
// a fresh scope tag, and whatever is left under that tag is deleted at the end.
import { randomBytes } from "node:crypto";
import { Sandbox } from "@vercel/sandbox";
import { describe, it } from "vitest";
import { defineConformanceSuite } from "../../src/conformance/index.js";
import { createVercelSandboxProvider } from "../../src/provider/index.js";

const live = process.env.VERCEL_SANDBOX_LIVE === "1";

if (live) {
  defineConformanceSuite("live Vercel project", async () => {
    const scope = `conformance-${randomBytes(4).toString("hex")}`;
    const credentials = {
      token: process.env.VERCEL_TOKEN ?? "",
      teamId: process.env.VERCEL_TEAM_ID ?? "",
      projectId: process.env.VERCEL_PROJECT_ID ?? "",
    };
    const ours = async () => (await Sandbox.list({ ...credentials, tags: { "openclaw-scope": scope } })).toArray();
    return {
      createProvider: (options) => createVercelSandboxProvider({ logger: { warn: () => undefined }, ...options }),
      profile: { tokenEnv: "VERCEL_TOKEN", teamIdEnv: "VERCEL_TEAM_ID", projectIdEnv: "VERCEL_PROJECT_ID", scope },
      sandboxes: async () => (await ours()).map((s) => ({ name: s.name, status: s.status, vcpus: s.vcpus })),
      stopSandbox: async (name) => {
        await (await Sandbox.get({ ...credentials, name })).stop();
      },
      secretToken: credentials.token,
      close: async () => {
        for (const s of await ours()) {
          await (await Sandbox.get({ ...credentials, name: s.name })).delete({ deleteOrphanSnapshots: true });
        }
      },
    };
  });
} else {
  describe("WorkerProvider conformance: live Vercel project", () => {
    it.skip("runs only with VERCEL_SANDBOX_LIVE=1 and Vercel credentials in the environment", () => undefined);
  });
}
