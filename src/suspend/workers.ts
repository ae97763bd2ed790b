// Our cloud workers as `environments.list` reports them, and the calls that release them through the gateway
// (so core reconciles each workspace before the sandbox goes): `sessions.reclaim` for a worker attached to
// sessions, `environments.destroy` for one that is not. Pure: parsing and planning only.

import type { Worker } from "./protocol.js";

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

export type ReclaimCall =
  | { method: "sessions.reclaim"; params: { key: string } }
  | { method: "environments.destroy"; params: { environmentId: string } };

export interface ReclaimPlan {
  calls: ReclaimCall[];
  /** Workers already being released: sleep must wait for them. */
  releasing: number;
}

export function planReclaim(workers: Worker[]): ReclaimPlan {
  const calls: ReclaimCall[] = [];
  let releasing = 0;
  for (const worker of workers) {
    if (RELEASING.has(worker.state)) releasing++;
    if (!LIVE.has(worker.state)) continue;
    if (worker.sessions.length === 0) {
      calls.push({ method: "environments.destroy", params: { environmentId: worker.environmentId } });
    } else {
      for (const key of worker.sessions) calls.push({ method: "sessions.reclaim", params: { key } });
    }
  }
  return { calls, releasing };
}
