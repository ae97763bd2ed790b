// What the cap needs from the gateway side: our workers as core holds them (with the sessions holding each and
// whether one is in an active turn), and a reclaim of the least recently active idle one through the gateway,
// so core reconciles its workspace before the sandbox goes. The suspend room implements it over the plugin's
// authenticated routes; the cap itself never talks to the gateway.

export interface CapWorker {
  leaseId: string;
  environmentId: string;
  /** Core's worker state (ready, attached, idle, provisioning, …). */
  state: string;
  /** Keys of the sessions attached to it (ids when a key is unknown). */
  sessions: string[];
  /** In an active turn (a run or model call in flight for one of its sessions), or not yet placed. */
  busy: boolean;
  /** Last activity seen for its sessions (epoch ms), or null when none was seen by this gateway process. */
  lastActiveMs: number | null;
}

export type ReclaimOutcome =
  | { status: "reclaimed"; worker: CapWorker }
  /** Every candidate is busy (or not reclaimable): nothing was touched. */
  | { status: "busy"; busy: number; candidates: number };

/** A session's worker placement as core holds it. */
export interface SessionPlacement {
  /** Core's placement state (active, reclaimed, provisioning, …). */
  state: string;
  providerId?: string;
  profileId?: string;
  /** The lease of the environment it was last placed on (a reclaimed placement's worker, now gone). */
  leaseId?: string;
}

export interface Reclaimer {
  /** Our live workers as the gateway lists them. */
  workers(): Promise<CapWorker[]>;
  /** The worker placement of the session `sessionKey`; undefined when it has none. */
  placementOf(sessionKey: string): Promise<SessionPlacement | undefined>;
  /** Reclaims the least recently active idle worker among `leaseIds`; resolves once core has released it. */
  reclaimOne(leaseIds: string[]): Promise<ReclaimOutcome>;
}
