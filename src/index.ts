// The OpenClaw plugin entry: registers the `vercel-sandbox` worker provider and the service that stops its
// keepalives when the gateway stops. Registration is side-effect free (no timers, no requests): it also runs
// in the gateway's read-only discovery modes.
import { createHash } from "node:crypto";
import { Value } from "@sinclair/typebox/value";
import { definePluginEntry } from "openclaw/plugin-sdk/plugin-entry";
import { type PluginConfig, PluginConfigSchema } from "./config.js";
import { createVercelSandboxProvider } from "./provider/index.js";

export const PLUGIN_ID = "vercel-sandbox";

function defaultScope(stateDir: string): string {
  return `gw-${createHash("sha256").update(stateDir).digest("hex").slice(0, 8)}`;
}

export default definePluginEntry({
  id: PLUGIN_ID,
  name: "Vercel Sandbox",
  description: "Runs OpenClaw cloud workers on Vercel Sandbox",
  register(api) {
    const config = (api.pluginConfig ?? {}) as PluginConfig;
    if (!Value.Check(PluginConfigSchema, config)) {
      api.logger.warn("vercel-sandbox: plugin config is invalid; using defaults");
    }
    const stateDir = api.runtime.state.resolveStateDir(process.env);
    const provider = createVercelSandboxProvider({
      logger: { info: (m) => api.logger.info(m), warn: (m) => api.logger.warn(m) },
      scope: config.scope ?? defaultScope(stateDir),
      stateDir,
    });
    api.registerWorkerProvider(provider);
    api.registerService({ id: "vercel-sandbox-keepalive", start() {}, stop: () => provider.dispose() });
  },
});
