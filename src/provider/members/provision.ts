// `provision`: one lease's worker, from nothing (or from what an earlier attempt left) to an enrolled node
// with its keepalive armed. Checks of the request come first (settings, execution mode, machine class, the
// lease id), so a bad request is refused before any Vercel call. A second call for a lease already in flight
// joins the first; attempts of one lease run one at a time (serial), and a failed attempt's enrollment secrets
// are dropped. The sequence itself is in provision-sequence.ts.
import type { WorkerLease, WorkerProvider } from "openclaw/plugin-sdk/plugin-entry";
import { WorkerProviderError } from "openclaw/plugin-sdk/plugin-entry";
import { forgetSecrets } from "../../infra/index.js";
import type { ProviderParts } from "../parts.js";
import { vcpusOfMachineClass } from "../policy.js";
import { sanitized } from "../steps/cleanup.js";
import { settingsOf } from "./profile.js";
import { provisionSequence } from "./provision-sequence.js";
import type { Renewal } from "./renewal.js";

export function createProvision(parts: ProviderParts, renewal: Renewal): WorkerProvider["provision"] {
  const { options, serial, allocationFor } = parts;
  /** Provisions in flight, by lease: a second call for the same lease joins the first. */
  const inflight = new Map<string, Promise<WorkerLease>>();

  return async function provision(profile, operationId, provisionOptions = {}) {
    const settings = settingsOf(profile);
    const mode = provisionOptions.executionMode;
    if (mode !== undefined && mode !== "worker-turn" && mode !== "remote-exec") {
      throw new WorkerProviderError(`vercel-sandbox: execution mode ${String(mode)} is not supported`);
    }
    let vcpus = settings.vcpus;
    if (provisionOptions.machineClass !== undefined) {
      const chosen = vcpusOfMachineClass(provisionOptions.machineClass);
      if (chosen === undefined) {
        throw new WorkerProviderError(
          `vercel-sandbox: machine class ${JSON.stringify(provisionOptions.machineClass.slice(0, 128))} is not one of vcpu-1, vcpu-2, vcpu-4, vcpu-8`,
        );
      }
      vcpus = chosen;
    }
    const allocation = allocationFor(settings, operationId);
    provisionOptions.signal?.throwIfAborted();
    const running = inflight.get(allocation.leaseId);
    if (running) return running;
    options.activity?.provisionStarted(allocation.leaseId);
    const run = { allocation, settings, rawSettings: profile, vcpus, options: provisionOptions };
    const attempt = serial
      .run(allocation.leaseId, () => provisionSequence(parts, renewal, run))
      .catch((error: unknown) => {
        const out = sanitized(error);
        // The enrollment this attempt registered is dead; a replay registers its own.
        forgetSecrets(allocation.leaseId);
        throw out;
      })
      .finally(() => {
        inflight.delete(allocation.leaseId);
        options.activity?.provisionEnded(allocation.leaseId);
      });
    inflight.set(allocation.leaseId, attempt);
    return attempt;
  };
}
