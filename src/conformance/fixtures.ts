// Test doubles for what the gateway hands a provider: operation ids and a node enrollment. They are the
// gateway's side of the contract, not our modules, so faking them is the only way to drive a provider
// outside a gateway. The secret values are recognisable so redaction checks can look for them.
import { randomBytes } from "node:crypto";
import type { NodeEnrollment, ProvisionOptions } from "../provider/types.js";

export const BOOTSTRAP_TOKEN = `bootstrap-${randomBytes(12).toString("hex")}`;
export const SETUP_CODE = `setupcode-${randomBytes(12).toString("hex")}`;

export function operationId(): string {
  return `provision:v2:${randomBytes(32).toString("hex")}`;
}

export function fakeEnrollment(deviceId = "device-conformance"): NodeEnrollment {
  return {
    nodeBootstrap: {
      url: `https://gateway.conformance.invalid/__openclaw__/worker-bootstrap/artifacts/${"0".repeat(64)}`,
      token: BOOTSTRAP_TOKEN,
      sha256: "0".repeat(64),
      bytes: 1,
      openclawVersion: "2026.9.2",
      enabledPluginIds: [],
    },
    openclawVersion: "2026.9.2",
    displayName: "Cloud worker conformance",
    waitForDeviceId: async () => deviceId,
    mode: "connect",
    setupCode: SETUP_CODE,
    setupId: "setup-conformance",
  };
}

/** Provision options as the gateway passes them, with an observable enrollment. */
export function enrollingOptions(extra: Partial<ProvisionOptions> = {}): ProvisionOptions & { begun: () => number } {
  let begun = 0;
  return {
    executionMode: "worker-turn",
    beginNodeEnrollment: async () => {
      begun += 1;
      return fakeEnrollment();
    },
    begun: () => begun,
    ...extra,
  };
}
