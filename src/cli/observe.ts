// What status and gc both start from: the sandboxes Vercel lists under our scope tags, the gateway's view of
// its worker environments, and the ledger's tombstones — read in that order, one after the other.
//
// The order is gc's proof of ownership. Core records a worker environment (provisioning, no lease id yet)
// before it asks the provider for a sandbox, so every sandbox in a listing taken first has its environment in
// the gateway's later answer: holding its lease, or provisioning without one (which keeps every sandbox). A
// sandbox created after the listing is not in it, so gc cannot judge it. Read the other way round (or at
// once), a provision landing between the two reads would show a sandbox with no environment: a false orphan.
// The ledger comes last: a tombstone written meanwhile is proof too, and one missing keeps the sandbox.

import type { LeaseLedger } from "../provider/index.js";
import type { VercelClient } from "../vercel/index.js";
import { type GatewayCall, readGateway } from "./gateway.js";
import type { ProfileEntry } from "./profiles.js";
import { listProfiles } from "./sandboxes.js";

export interface Sources {
  call: GatewayCall;
  client: VercelClient;
  profiles: readonly ProfileEntry[];
  ledger: LeaseLedger;
}

export async function observe({ call, client, profiles, ledger }: Sources) {
  const listings = await listProfiles(client, profiles);
  const gateway = await readGateway(call);
  const tombstones = new Map(await ledger.all());
  return { gateway, listings, tombstones };
}
