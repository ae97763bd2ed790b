// The conformance-style stand-in enrollment every bench section uses: an operation id like core's, provision
// options whose enrollment looks like the gateway's, and an enroller that only reports the enrollment's device
// id (no request of its own). No import of the provider here, so the gateway companion plugin
// (bench/gateway-companion/) can use it beside the installed plugin's own copy.
import { randomBytes } from "node:crypto";

export const operationId = () => `provision:v2:${randomBytes(32).toString("hex")}`;

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
