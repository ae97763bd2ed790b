// Pure decisions for the worker cap on the gateway side: our workers as `environments.list` reports them,
// joined with the session keys (`sessions.list`) and each session's activity, and which one to reclaim: the
// least recently active worker that is placed and idle (no run or model call in flight for any of its
// sessions). A worker still being placed, or one whose session cannot be named (so core could not reconcile
// it through `sessions.reclaim`), is never chosen.
import type { CapWorker } from "../provider/index.js";
import type { SessionState } from "./sessions.js";
import type { SessionRef } from "./workers.js";

/** Placed: a reclaim reconciles and releases it. */
const PLACED = new Set(["ready", "idle", "attached"]);
/** Holding (or about to hold) a sandbox: counted, never chosen. */
const HOLDING = new Set(["requested", "provisioning", "bootstrapping", "draining", "destroying", ...PLACED]);

interface Listed {
  id?: unknown;
  worker?: { providerId?: unknown; leaseId?: unknown; state?: unknown; attachedSessionIds?: unknown };
}

export interface CapCandidate extends CapWorker {
  /** How to release it through the gateway; absent when it cannot be released safely (a session we cannot name). */
  release?:
    | { method: "sessions.reclaim"; params: SessionRef }[]
    | { method: "environments.destroy"; params: { environmentId: string } }[];
}

/** Our workers holding a sandbox, with sessions named by key where `keys` knows them and activity from `activity`. */
export function capWorkers(
  payload: unknown,
  providerId: string,
  keys: Map<string, SessionRef>,
  activity: (sessionKey: string) => SessionState | undefined,
): CapCandidate[] {
  const environments = (payload as { environments?: unknown })?.environments;
  if (!Array.isArray(environments)) return [];
  const out: CapCandidate[] = [];
  for (const env of environments as Listed[]) {
    const w = env?.worker;
    if (!w || w.providerId !== providerId || typeof env.id !== "string" || typeof w.leaseId !== "string") continue;
    const state = String(w.state ?? "unknown");
    if (!HOLDING.has(state)) continue;
    const ids = Array.isArray(w.attachedSessionIds)
      ? w.attachedSessionIds.filter((s): s is string => typeof s === "string").slice(0, 64)
      : [];
    const refs = ids.map((id) => keys.get(id));
    const named = refs.every((r) => r !== undefined) ? (refs as SessionRef[]) : undefined;
    const states = (named ?? []).map((r) => activity(r.key));
    const seen = states.filter((s): s is SessionState => s !== undefined).map((s) => s.lastActiveMs);
    const worker: CapCandidate = {
      leaseId: w.leaseId,
      environmentId: env.id,
      state,
      sessions: ids.map((id, i) => refs[i]?.key ?? id),
      busy: !PLACED.has(state) || states.some((s) => s?.active === true),
      lastActiveMs: seen.length > 0 ? Math.max(...seen) : null,
    };
    if (PLACED.has(state) && named) {
      worker.release =
        named.length === 0
          ? [{ method: "environments.destroy", params: { environmentId: env.id } }]
          : named.map((params) => ({ method: "sessions.reclaim", params }));
    }
    out.push(worker);
  }
  return out;
}

export type VictimChoice = { victim: CapCandidate } | { victim: undefined; busy: number; candidates: number };

/** The least recently active idle, releasable worker among `among` (ties: the lease id, for a stable choice). */
export function chooseVictim(workers: CapCandidate[], among: ReadonlySet<string>): VictimChoice {
  const candidates = workers.filter((w) => among.has(w.leaseId));
  const idle = candidates.filter((w) => !w.busy && w.release !== undefined);
  if (idle.length === 0) {
    return { victim: undefined, busy: candidates.filter((w) => w.busy).length, candidates: candidates.length };
  }
  idle.sort((a, b) => (a.lastActiveMs ?? 0) - (b.lastActiveMs ?? 0) || (a.leaseId < b.leaseId ? -1 : 1));
  return { victim: idle[0] as CapCandidate };
}

/** The public view of a candidate (what the route answers): the release plan stays inside. */
export function publicWorker({ release: _release, ...worker }: CapCandidate): CapWorker {
  return worker;
}

export interface SessionPlacementView {
  state: string;
  providerId?: string;
  profileId?: string;
  leaseId?: string;
}

const LEASE_ID = /^vsb_[0-9a-f]{24}$/;

const text = (value: unknown, max: number): string | undefined =>
  typeof value === "string" && value.length > 0 && value.length <= max ? value : undefined;

/**
 * The placement of the session `key` as `sessions.list` reports it, its provider and profile filled in from
 * `environments.list` when core left them out (a reclaimed placement names them only while its environment's
 * owner epoch matches), with the lease of that environment; undefined when the session is not listed or has no
 * placement.
 */
export function sessionPlacement(
  sessionsPayload: unknown,
  environmentsPayload: unknown,
  key: string,
): SessionPlacementView | undefined {
  const rows = (sessionsPayload as { sessions?: unknown })?.sessions;
  if (!Array.isArray(rows)) return undefined;
  const row = (rows as Array<{ key?: unknown; placement?: unknown }>).find((r) => r?.key === key);
  const placement = row?.placement as
    | { state?: unknown; providerId?: unknown; profileId?: unknown; environmentId?: unknown }
    | undefined;
  const state = text(placement?.state, 64);
  if (!placement || !state) return undefined;
  const environments = (environmentsPayload as { environments?: unknown })?.environments;
  const environment = Array.isArray(environments)
    ? (
        environments as Array<{
          id?: unknown;
          profileId?: unknown;
          worker?: { providerId?: unknown; leaseId?: unknown };
        }>
      ).find((e) => e?.id !== undefined && e.id === placement.environmentId)
    : undefined;
  const providerId = text(placement.providerId, 128) ?? text(environment?.worker?.providerId, 128);
  const profileId = text(placement.profileId, 128) ?? text(environment?.profileId, 128);
  const lease = environment?.worker?.leaseId;
  const leaseId = typeof lease === "string" && LEASE_ID.test(lease) ? lease : undefined;
  return {
    state,
    ...(providerId ? { providerId } : {}),
    ...(profileId ? { profileId } : {}),
    ...(leaseId ? { leaseId } : {}),
  };
}
