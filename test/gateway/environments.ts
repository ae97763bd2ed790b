// What the real-gateway specs share about worker environments: the profile settings of a `vercel-sandbox` profile
// backed by a test's emulator, and waiting for an environment to be ready or gone.
import type { LocalSandboxApi } from "../../src/emulator/index.js";
import type { GatewayHarness } from "./gateway-harness.js";
import { waitFor } from "./wait.js";

export const TOKEN_ENV = "VERCEL_TOKEN";

export interface Environment {
  id: string;
  status?: string;
  worker?: { providerId: string; leaseId?: string; state: string; error?: string };
}

/** Settings of a profile whose sandboxes live in `api`; the token is in the gateway's env under TOKEN_ENV. */
export function emulatorSettings(api: LocalSandboxApi): Record<string, unknown> {
  return {
    apiUrl: api.url,
    tokenEnv: TOKEN_ENV,
    teamId: api.credentials.teamId,
    projectId: api.credentials.projectId,
    runtime: "node24",
    timeout: "30m",
  };
}

async function environmentsOf(h: GatewayHarness): Promise<Environment[]> {
  return (await h.callOk<{ environments: Environment[] }>("environments.list", {})).environments;
}

/** Waits until the environment is ready; a failed one fails the wait at once with its error. */
export function readyEnvironment(h: GatewayHarness, environmentId: string | undefined, timeoutMs = 120_000) {
  return waitFor(
    "the environment to be ready",
    async () => {
      const found = (await environmentsOf(h)).find((e) => e.id === environmentId);
      if (found?.worker?.state === "failed") throw new Error(`environment failed: ${found.worker.error}`);
      return found?.worker?.state === "ready" ? found : undefined;
    },
    { timeoutMs, intervalMs: 1_000 },
  );
}

/** Waits until the environment is destroyed (or no longer listed); resolves with that state. */
export function destroyedEnvironment(h: GatewayHarness, environmentId: string | undefined, timeoutMs = 240_000) {
  return waitFor(
    "the environment to be destroyed",
    async () => {
      const state = (await environmentsOf(h)).find((e) => e.id === environmentId)?.worker?.state;
      return state === undefined || state === "destroyed" ? (state ?? "gone") : undefined;
    },
    { timeoutMs, intervalMs: 2_000 },
  );
}
