// `inspect`: what a lease's sandbox is doing now, in the contract's words, without waking it (the client seam
// hands inspect a fetch that refuses the SDK's auto-resume). A running sandbox keeps (or regains) its
// keepalive; any other state ends it. A missing sandbox is "destroyed" only when we destroyed it ourselves.
import type { WorkerLeaseStatus, WorkerProvider } from "openclaw/plugin-sdk/plugin-entry";
import { isFailure } from "../../vercel/index.js";
import { sandboxNameOf } from "../allocation.js";
import type { ProviderParts } from "../parts.js";
import { sanitized } from "../steps/cleanup.js";
import { settingsOf } from "./profile.js";
import type { Renewal } from "./renewal.js";

export function createInspect({ ledger, projectFor }: ProviderParts, renewal: Renewal): WorkerProvider["inspect"] {
  return async function inspect({ leaseId, profile }): Promise<WorkerLeaseStatus> {
    const settings = settingsOf(profile);
    try {
      const sandboxName = sandboxNameOf(leaseId);
      const sandbox = await (await projectFor(settings)).find(sandboxName);
      if (!sandbox) {
        await renewal.disarm(leaseId);
        return (await ledger.tombstone(leaseId)) ? { status: "destroyed" } : { status: "unknown" };
      }
      switch (sandbox.status) {
        case "running":
        case "pending":
        case "snapshotting":
          renewal.arm(leaseId, sandboxName, settings);
          return { status: "active", sharedHost: false };
        case "stopping":
        case "stopped":
          await renewal.disarm(leaseId);
          return { status: "dormant" };
        default:
          await renewal.disarm(leaseId);
          return { status: "unknown" };
      }
    } catch (error) {
      if (isFailure(error, "gone")) return { status: "unknown" };
      throw sanitized(error);
    }
  };
}
