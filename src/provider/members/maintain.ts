// `maintain`: core's periodic pass over every profile (src/provider/maintenance.ts does the work: releasing
// sandboxes of leases core no longer knows, and the warm-image retention). Failures of single profiles are
// gathered and reported together after the pass, so one bad profile does not stop the others.
import type { WorkerProvider } from "openclaw/plugin-sdk/plugin-entry";
import type { MaintainContext } from "../../infra/index.js";
import { maintenanceFailure, maintenancePass, type ProfileFailure } from "../maintenance.js";
import type { ProviderParts } from "../parts.js";
import { sanitized } from "../steps/cleanup.js";
import { settingsOf } from "./profile.js";

export function createMaintain(parts: ProviderParts): NonNullable<WorkerProvider["maintain"]> {
  const { ledger, images, serial, retained, absenceProof, logger, options, projectFor } = parts;
  const deps = { ledger, images, serial, retained, absenceProof, logger, scope: options.scope, settingsOf, projectFor };
  return async function maintain(context: MaintainContext) {
    let failures: ProfileFailure[];
    try {
      failures = await maintenancePass(deps, context);
    } catch (error) {
      throw sanitized(error);
    }
    if (failures.length > 0) throw maintenanceFailure(failures);
  };
}
