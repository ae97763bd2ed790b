// Round trips per operation: the plugin's own Vercel requests (counted at its `fetch`, so the stand-in
// gateway's reads of the sandbox are not charged to it), against the floor each operation cannot go below.
// Cold provision and replays run twice: with the REAL bootstrap enroller (its request pattern, against a
// stand-in gateway serving a fixture node) and with the conformance stand-in enroller (no requests of its own).
// The warm provision's row is the warm start of the warm-vs-cold figure (sections/warm.mjs), counted the same way.
// A restarted gateway is a new provider on the same state dir; "another process" shares nothing with it.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { startEnrollmentGateway } from "../lib/enrollment-gateway.mjs";
import {
  makeProvider,
  operationId,
  profileOf,
  sandboxNameOfLease,
  standInEnroller,
  standInOptions,
} from "../lib/provider.mjs";
import { countingFetch, tally } from "../lib/stats.mjs";

/** Floors: the requests an operation needs at the least, and why. */
/** Past the provider's minimum top-up (1 s of used session time), so a renew has something to extend. */
export const RENEWABLE_AFTER_MS = 1_100;

const FLOORS = {
  "cold provision, real bootstrap": [
    4,
    "create, open egress, run the bootstrap (in its command, streams to its end), narrow egress",
  ],
  "cold provision, stand-in enroller": [3, "create, open egress, narrow egress"],
  "replay, same process, real bootstrap": [2, "lookup, run the bootstrap (adopts or resumes the node)"],
  "replay, same process, stand-in enroller": [1, "lookup"],
  "replay, restarted gateway, real bootstrap": [
    2,
    "lookup (the state dir's enrolled mark says the sandbox exists), run the bootstrap (adopts or resumes the node)",
  ],
  "replay, another process without the state dir, real bootstrap": [
    3,
    "create (409: no lookup on the cold path), lookup, run the bootstrap",
  ],
  inspect: [1, "lookup"],
  renew: [2, "lookup (expiry), extend"],
  destroy: [2, "delete, one lookup proving absence"],
  "warm provision (from a warm image), real bootstrap": [
    4,
    "create from the image, open egress, run the bootstrap, narrow egress: the issue's floor (create from " +
      "snapshot, write the bootstrap, run it, wait) with the write gone and the two egress updates every " +
      "provision makes; it assumes no project preparation",
  ],
};

function rowOf(operation, { requests, creates, pattern }) {
  const [floor, floorIs] = FLOORS[operation];
  return { operation, requests, creates, floor, floorIs, pattern };
}

/** The warm provision's row: the requests the warm-vs-cold figure counted for its warm start. */
export function warmProvisionRow(warm) {
  return rowOf("warm provision (from a warm image), real bootstrap", warm);
}

export async function roundTrips(api) {
  const token = api.credentials.token;
  const profile = profileOf(api);
  const plugin = countingFetch(api.fetch);
  const gateway = await startEnrollmentGateway({ ...api.credentials, fetch: api.fetch });
  const stateDir = mkdtempSync(join(tmpdir(), "bench-trips-"));
  const providers = [];
  const make = (options) => {
    const provider = makeProvider(token, { fetch: plugin.fetch, scope: "bench-trips", ...options });
    providers.push(provider);
    return provider;
  };
  const rows = [];
  async function count(operation, call) {
    const mark = plugin.mark();
    await call();
    rows.push(rowOf(operation, tally(plugin.since(mark))));
  }
  try {
    // The gateway before and after its restart share the plugin's state dir, as a real gateway's do.
    const real = make({ enrollment: { waitTimeoutMs: 120_000 }, stateDir });
    const op = operationId();
    const { leaseId } = await real.resolveAllocation(profile, op);
    const name = sandboxNameOfLease(leaseId);
    await count("cold provision, real bootstrap", () => real.provision(profile, op, gateway.options(name, leaseId)));
    await count("replay, same process, real bootstrap", () =>
      real.provision(profile, op, gateway.options(name, leaseId, "resume")),
    );
    const restarted = make({ enrollment: { waitTimeoutMs: 120_000 }, stateDir });
    await count("replay, restarted gateway, real bootstrap", () =>
      restarted.provision(profile, op, gateway.options(name, leaseId, "resume")),
    );
    const stranger = make({ enrollment: { waitTimeoutMs: 120_000 } });
    await count("replay, another process without the state dir, real bootstrap", () =>
      stranger.provision(profile, op, gateway.options(name, leaseId, "resume")),
    );
    await count("inspect", () => restarted.inspect({ leaseId, profile }));
    // The provider tops a session up only once it has used at least a second of it (less is not worth a
    // request): give it that, outside the count, so the row is the lookup and the extension every time.
    await sleep(RENEWABLE_AFTER_MS);
    await count("renew", () => restarted.renew(leaseId));
    await count("destroy", () => restarted.destroy({ leaseId, profile }));

    const standIn = make({ enroll: standInEnroller });
    const other = operationId();
    const lease = { leaseId: (await standIn.resolveAllocation(profile, other)).leaseId, profile };
    await count("cold provision, stand-in enroller", () => standIn.provision(profile, other, standInOptions()));
    await count("replay, same process, stand-in enroller", () => standIn.provision(profile, other, standInOptions()));
    await standIn.destroy(lease);
    return { rows, artifactDownloads: gateway.downloads() };
  } finally {
    for (const provider of providers) await provider.dispose();
    await gateway.close();
    rmSync(stateDir, { recursive: true, force: true });
  }
}
