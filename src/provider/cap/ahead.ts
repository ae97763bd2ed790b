// Room for a turn before it is placed (issue 47). A message in a conversation whose worker was reclaimed is
// placed again by core during its turn; at the cap, that placement could only start a reclaim and be refused
// (core's reclaim waits for every placement in flight, the asking one included). The plugin's `before_dispatch`
// hook runs this first, before the turn's placement and outside any: when the session's placement is
// `reclaimed` on one of our capped profiles, the cap reclaims the least recently active idle worker and waits
// for it, or waits (up to the profile's `capWait`) for a busy one to become idle. It never refuses the message
// itself: the placement that follows applies the cap and, past the wait, fails naming it.
import type { ProviderLogger } from "../../infra/index.js";
import type { AheadOutcome, LeaseCap, WorkerCap } from "./gate.js";
import type { Reclaimer } from "./types.js";

export interface TurnRoomOptions {
  providerId: string;
  cap: WorkerCap;
  reclaimer(): Reclaimer | undefined;
  /** The cap of one of our profiles and how long a turn waits at it; undefined when the profile sets none. */
  capOf(profileId: string): LeaseCap | undefined;
  logger: ProviderLogger;
}

/** What the hook did for one message: skipped (no capped re-placement ahead), or the cap's outcome. */
export type TurnRoom = "skipped" | AheadOutcome;

export async function makeRoomForTurn(sessionKey: string | undefined, options: TurnRoomOptions): Promise<TurnRoom> {
  const reclaimer = options.reclaimer();
  if (!sessionKey || !reclaimer) return "skipped";
  let placement: Awaited<ReturnType<Reclaimer["placementOf"]>>;
  try {
    placement = await reclaimer.placementOf(sessionKey);
  } catch (error) {
    options.logger.warn(
      `vercel-sandbox: maxWorkers: could not read the placement of a session before its turn (${(error as Error).message}); its placement applies the cap`,
    );
    return "skipped";
  }
  // Only a session whose worker of ours was reclaimed is placed again by its turn; one with a live worker keeps it.
  if (placement?.state !== "reclaimed" || placement.providerId !== options.providerId) return "skipped";
  // Core names the profile of a reclaimed placement only while its environment's owner epoch matches: the cap the
  // lease was placed under (remembered at its placement) comes first.
  const cap =
    (placement.leaseId ? options.cap.capOf(placement.leaseId) : undefined) ??
    (placement.profileId ? options.capOf(placement.profileId) : undefined);
  if (!cap) return "skipped";
  const started = Date.now();
  const outcome = await options.cap.makeRoomAhead(cap.maxWorkers, cap.waitMs);
  if (outcome !== "room") {
    options.logger.info?.(
      `vercel-sandbox: maxWorkers ${cap.maxWorkers}: before a turn of a reclaimed session: ${outcome} in ${Date.now() - started} ms`,
    );
  }
  return outcome;
}
