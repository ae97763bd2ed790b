// Test doubles for what the gateway hands a provider: operation ids and a node enrollment. They are the
// gateway's side of the contract, not our modules, so faking them is the only way to drive a provider
// outside a gateway. The secret values are recognisable so redaction checks can look for them.
import { randomBytes } from "node:crypto";
import type { NodeEnrollment, ProvisionOptions } from "../infra/index.js";

export const BOOTSTRAP_TOKEN = `bootstrap-${randomBytes(12).toString("hex")}`;
export const SETUP_CODE = `setupcode-${randomBytes(12).toString("hex")}`;

export function operationId(): string {
  return `provision:v2:${randomBytes(32).toString("hex")}`;
}

/** A fresh device id, as a node that enrolled would report it: unique, so a spec can tell enrollments apart. */
export function deviceIdOf(): string {
  return `device-${randomBytes(8).toString("hex")}`;
}

export function fakeEnrollment(deviceId = deviceIdOf()): NodeEnrollment {
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

export interface EnrollingOptions extends ProvisionOptions {
  /** How many times the provider began node enrollment. */
  begun(): number;
  /** The enrollments handed to the provider, in order, each with the device id it will report. */
  issued(): Array<{ enrollment: NodeEnrollment; deviceId: string }>;
}

/** Provision options as the gateway passes them, with an observable enrollment (a fresh device id each time). */
export function enrollingOptions(extra: Partial<ProvisionOptions> = {}): EnrollingOptions {
  const issued: Array<{ enrollment: NodeEnrollment; deviceId: string }> = [];
  return {
    executionMode: "worker-turn",
    beginNodeEnrollment: async () => {
      const deviceId = deviceIdOf();
      const enrollment = fakeEnrollment(deviceId);
      issued.push({ enrollment, deviceId });
      return enrollment;
    },
    begun: () => issued.length,
    issued: () => [...issued],
    ...extra,
  };
}
