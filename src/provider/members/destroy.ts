// `destroy`: the lease's sandbox is released with proof of absence, under the lease's lock so a provision still
// in flight has settled and cannot re-arm its keepalive after. The tombstone is written before the release, so
// a later provision of the same lease is refused and a later inspect may answer "destroyed".
import type { WorkerProvider } from "openclaw/plugin-sdk/plugin-entry";
import { forgetSecrets } from "../../infra/index.js";
import { sandboxNameOf } from "../allocation.js";
import type { ProviderParts } from "../parts.js";
import { releaseSandbox } from "../release.js";
import { sanitized } from "../steps/cleanup.js";
import { settingsOf } from "./profile.js";
import type { Renewal } from "./renewal.js";

export function createDestroy(parts: ProviderParts, renewal: Renewal): WorkerProvider["destroy"] {
  const { ledger, images, serial, retained, absenceProof, projectFor } = parts;
  return async function destroy({ leaseId, profile }) {
    const settings = settingsOf(profile);
    try {
      const sandboxName = sandboxNameOf(leaseId);
      await serial.run(leaseId, async () => {
        await renewal.end(leaseId);
        await ledger.bury(leaseId, sandboxName);
        await releaseSandbox(await projectFor(settings), sandboxName, retained, undefined, absenceProof);
        await ledger.markAbsent(leaseId);
        // The lease is gone: the image it started from is no longer pinned by it.
        await images.releaseChoice(leaseId);
      });
    } catch (error) {
      throw sanitized(error);
    }
    forgetSecrets(leaseId);
  };
}
