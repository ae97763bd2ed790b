// What every bench section needs to drive the built provider against an emulator: a profile pointing at it,
// a provider factory with a quiet logger, the conformance-style stand-in enroller, and lease → sandbox names.
import { randomBytes } from "node:crypto";
import { createVercelSandboxProvider } from "../../dist/provider/index.js";

export const TOKEN_ENV = "BENCH_VERCEL_TOKEN";
const quiet = { warn: () => undefined };

export const operationId = () => `provision:v2:${randomBytes(32).toString("hex")}`;
export const sandboxNameOfLease = (leaseId) => leaseId.replace(/^vsb_/, "openclaw-");

export function profileOf(api) {
  return { apiUrl: api.url, tokenEnv: TOKEN_ENV, teamId: api.credentials.teamId, projectId: api.credentials.projectId };
}

/** The node "enrolls" by reporting the gateway enrollment's device id: no request of its own. */
export const standInEnroller = async ({ enrollment }) => enrollment.waitForDeviceId();

/** Provision options with an enrollment like the gateway's, for the stand-in enroller. */
export function standInOptions() {
  const deviceId = `device-${randomBytes(8).toString("hex")}`;
  return {
    executionMode: "worker-turn",
    beginNodeEnrollment: async () => ({
      nodeBootstrap: {
        url: `https://gateway.bench.invalid/__openclaw__/worker-bootstrap/artifacts/${"0".repeat(64)}`,
        token: `bench-bootstrap-${randomBytes(12).toString("hex")}`,
        sha256: "0".repeat(64),
        bytes: 1,
        openclawVersion: "2026.9.2",
        enabledPluginIds: [],
      },
      openclawVersion: "2026.9.2",
      displayName: "Cloud worker bench",
      waitForDeviceId: async () => deviceId,
      mode: "connect",
      setupCode: `bench-setup-${randomBytes(12).toString("hex")}`,
      setupId: "bench",
    }),
  };
}

export function makeProvider(token, options = {}) {
  return createVercelSandboxProvider({ env: { [TOKEN_ENV]: token }, logger: quiet, ...options });
}
