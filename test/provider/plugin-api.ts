// A stand-in for the gateway's plugin API (the host's object, not ours): what register() receives, recording
// what the plugin registers.
import type { VercelSandboxProvider } from "../../src/provider/index.js";

export type Service = { id: string; stop: () => Promise<void> };

export function fakePluginApi(pluginConfig: Record<string, unknown> = {}, stateDir = "/tmp/openclaw-entry-test-state") {
  const registered: { providers: VercelSandboxProvider[]; services: Service[]; warnings: string[] } = {
    providers: [],
    services: [],
    warnings: [],
  };
  const api = {
    id: "vercel-sandbox",
    pluginConfig,
    registrationMode: "full",
    logger: { info: () => undefined, warn: (m: string) => registered.warnings.push(m), error: () => undefined },
    runtime: { state: { resolveStateDir: () => stateDir } },
    registerWorkerProvider: (provider: VercelSandboxProvider) => registered.providers.push(provider),
    registerService: (service: Service) => registered.services.push(service),
    registerCli: () => undefined,
    registerGatewayMethod: () => undefined,
  };
  return { api, registered };
}
