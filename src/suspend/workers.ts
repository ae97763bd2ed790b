// Our cloud workers as `environments.list` reports them, and the calls that release them through the gateway
// (so core reconciles each workspace before the sandbox goes): `sessions.reclaim` for a worker attached to
// sessions, `environments.destroy` for one that is not. Environments name attached sessions by session id while
// `sessions.reclaim` takes a session key, so ids are mapped through `sessions.list`; a worker whose session is
// not listed is destroyed instead. Pure: parsing and planning only.

import type { Worker } from "../protocol/index.js";

/** Worker states in which the gateway still holds a machine we must release before sleeping. */
const LIVE = new Set(["requested", "provisioning", "bootstrapping", "ready", "attached", "idle"]);
/** States in which release is under way but not yet confirmed: sleep waits for them. */
const RELEASING = new Set(["draining", "destroying"]);

interface ListedEnvironment {
  id?: unknown;
  worker?: { providerId?: unknown; state?: unknown; attachedSessionIds?: unknown };
}

/** The workers of `providerId` in an `environments.list` payload (unknown shapes yield none). */
export function ourWorkers(payload: unknown, providerId: string): Worker[] {
  const environments = (payload as { environments?: unknown })?.environments;
  if (!Array.isArray(environments)) return [];
  const workers: Worker[] = [];
  for (const env of environments as ListedEnvironment[]) {
    const worker = env?.worker;
    if (!worker || worker.providerId !== providerId || typeof env.id !== "string") continue;
    const sessions = Array.isArray(worker.attachedSessionIds)
      ? worker.attachedSessionIds.filter((s): s is string => typeof s === "string")
      : [];
    workers.push({ environmentId: env.id, state: String(worker.state ?? "unknown"), sessions });
  }
  return workers;
}

export interface SessionRef {
  key: string;
  agentId?: string;
}

/** Session id → key (and agent) from a `sessions.list` payload (unknown shapes yield none). */
export function sessionKeys(payload: unknown): Map<string, SessionRef> {
  const rows = (payload as { sessions?: unknown })?.sessions;
  const keys = new Map<string, SessionRef>();
  if (!Array.isArray(rows)) return keys;
  for (const row of rows as Array<{ key?: unknown; sessionId?: unknown; agentId?: unknown }>) {
    if (typeof row?.key !== "string" || typeof row.sessionId !== "string") continue;
    keys.set(row.sessionId, { key: row.key, ...(typeof row.agentId === "string" ? { agentId: row.agentId } : {}) });
  }
  return keys;
}

export type ReclaimCall =
  | { method: "sessions.reclaim"; params: SessionRef }
  | { method: "environments.destroy"; params: { environmentId: string } };

export interface ReclaimPlan {
  calls: ReclaimCall[];
  /** Workers already being released: sleep must wait for them. */
  releasing: number;
}

export function planReclaim(workers: Worker[], keys: Map<string, SessionRef> = new Map()): ReclaimPlan {
  const calls: ReclaimCall[] = [];
  let releasing = 0;
  for (const worker of workers) {
    if (RELEASING.has(worker.state)) releasing++;
    if (!LIVE.has(worker.state)) continue;
    const refs = worker.sessions.map((id) => keys.get(id));
    if (worker.sessions.length === 0 || refs.some((ref) => ref === undefined)) {
      calls.push({ method: "environments.destroy", params: { environmentId: worker.environmentId } });
    } else {
      for (const ref of refs as SessionRef[]) calls.push({ method: "sessions.reclaim", params: ref });
    }
  }
  return { calls, releasing };
}

/** Whether planning needs `sessions.list` (a live worker is attached to sessions). */
export function needsSessionKeys(workers: Worker[]): boolean {
  return workers.some((w) => LIVE.has(w.state) && w.sessions.length > 0);
}
