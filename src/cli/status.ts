// `openclaw vercel-sandbox status`: our leases joined from three places — the environments the gateway holds,
// the sandboxes Vercel lists under our scope tags, and the lease ledger's tombstones — with the gateway's
// in-process keepalive and idle clock. `buildStatus` is the pure join; `renderStatus` the table.

import type { IdleStatus } from "../gateway-status/index.js";
import type { Tombstone } from "../provider/index.js";
import { leaseIdOf, sandboxNameOf } from "../provider/index.js";
import type { GatewayView } from "./gateway.js";
import type { Listing } from "./sandboxes.js";
import { formatDuration, formatTable, indented } from "./table.js";

export interface LeaseRow {
  leaseId: string | null;
  sandboxName: string | null;
  /** The profile whose listing found the sandbox; null when no listing did. */
  profile: string | null;
  environmentId: string | null;
  /** The worker state core reports, or null when no environment holds the lease. */
  workerState: string | null;
  /** Vercel's sandbox status, `absent` when every listing succeeded without it, or `unknown`. */
  vercel: string;
  /** Whether the gateway's keepalive extends it; null when the gateway did not say. */
  keepalive: boolean | null;
  destroyedAt: number | null;
  /** Ids of the sessions holding the worker (from the gateway's environment). */
  sessions: string[];
  /** How the worker cap counts it (`reserved` while placed, `live` once allocated); null when it does not. */
  counted: "reserved" | "live" | null;
}

/** The worker cap (`maxWorkers`) as the gateway process holds it; null when the gateway did not say. */
export interface CapLine {
  maxWorkers: number | null;
  counted: number;
}

export interface StatusReport {
  gateway: { reachable: boolean; error: string | null; remedy: string | null; idle: IdleStatus | null };
  cap: CapLine | null;
  profiles: Array<{ id: string; scope: string; sandboxes: number | null; note: string | null }>;
  leases: LeaseRow[];
}

const nameOf = (leaseId: string) => {
  try {
    return sandboxNameOf(leaseId);
  } catch {
    return null;
  }
};

export function buildStatus(gateway: GatewayView, listings: readonly Listing[], tombstones: Map<string, Tombstone>) {
  const found = new Map<string, { profile: string; status: string }>();
  for (const l of listings) {
    if (l.state !== "listed") continue;
    for (const s of l.sandboxes) found.set(s.name, { profile: l.profileId, status: s.status });
  }
  const complete = listings.every((l) => l.state === "listed");
  const environments = gateway.reachable ? gateway.environments : [];
  const keepalive = gateway.reachable && gateway.status ? new Set(gateway.status.keepalive) : undefined;
  const capSnapshot = gateway.reachable ? gateway.status?.cap : undefined;
  const counted = new Map((capSnapshot?.counted ?? []).map((c) => [c.leaseId, c.phase]));
  const rows: LeaseRow[] = [];
  const row = (leaseId: string | null, env?: (typeof environments)[number]): LeaseRow => {
    const sandboxName = leaseId ? nameOf(leaseId) : null;
    const seen = sandboxName ? found.get(sandboxName) : undefined;
    return {
      leaseId,
      sandboxName,
      profile: seen?.profile ?? null,
      environmentId: env?.environmentId ?? null,
      workerState: env?.state ?? null,
      vercel: seen?.status ?? (complete && leaseId ? "absent" : "unknown"),
      keepalive: keepalive && leaseId ? keepalive.has(leaseId) : null,
      destroyedAt: (leaseId && tombstones.get(leaseId)?.destroyedAt) || null,
      sessions: env?.sessions ?? [],
      counted: (leaseId && counted.get(leaseId)) || null,
    };
  };
  const listed = new Set<string>();
  for (const env of environments) {
    // Destroyed environments stay listed for a while; they matter only while their sandbox still exists.
    const name = env.leaseId ? nameOf(env.leaseId) : null;
    if (env.state === "destroyed" && !(name && found.has(name))) continue;
    rows.push(row(env.leaseId ?? null, env));
    if (env.leaseId) listed.add(env.leaseId);
  }
  for (const name of found.keys()) {
    const leaseId = leaseIdOf(name);
    if (leaseId && !listed.has(leaseId)) rows.push(row(leaseId));
    if (leaseId) listed.add(leaseId);
  }
  // A reservation has no environment lease or sandbox yet: it still counts against the cap.
  for (const leaseId of counted.keys()) if (!listed.has(leaseId)) rows.push(row(leaseId));
  const report: StatusReport = {
    gateway: gateway.reachable
      ? { reachable: true, error: gateway.statusError ?? null, remedy: null, idle: gateway.status?.idle ?? null }
      : { reachable: false, error: gateway.error, remedy: gateway.remedy, idle: null },
    cap: capSnapshot ? { maxWorkers: capSnapshot.maxWorkers, counted: capSnapshot.counted.length } : null,
    profiles: listings.map((l) => ({
      id: l.profileId,
      scope: l.scope,
      sandboxes: l.state === "listed" ? l.sandboxes.length : null,
      note: l.state === "failed" ? `${l.error}. ${l.remedy}` : l.state === "skipped" ? l.reason : null,
    })),
    leases: rows,
  };
  return report;
}

function idleLine(idle: IdleStatus | null): string {
  if (!idle) return "idle clock: not running (no `suspend` block in the plugin config)";
  const parts = [
    `idle ${formatDuration(idle.idleMs)} of ${formatDuration(idle.idleAfterMs)}`,
    `turns ${idle.activeTurns}, model calls ${idle.activeModelCalls}, provisions ${idle.activeProvisions}`,
    idle.fence ? `FENCED ${formatDuration(idle.nowMs - idle.fence.sinceMs)} ago` : "fence: none",
    idle.deadlineAtMs === null ? "deadline: none" : `deadline in ${formatDuration(idle.deadlineAtMs - idle.nowMs)}`,
  ];
  if (idle.due) parts.push(`sleep due (${idle.due})`);
  return `idle clock: ${parts.join(" · ")}`;
}

function capLine(cap: CapLine | null): string {
  if (!cap) return "worker cap: unknown (the running gateway predates maxWorkers)";
  const max = cap.maxWorkers === null ? "unbounded (no placement named maxWorkers yet)" : String(cap.maxWorkers);
  return `worker cap: maxWorkers ${max} · ${cap.counted} counted`;
}

export function renderStatus(report: StatusReport): string {
  const g = report.gateway;
  const lines = [
    g.reachable
      ? "Gateway: reachable"
      : `Gateway: not reachable — ${indented(g.error ?? "", "  ")}\n  → ${indented(g.remedy ?? "", "    ")}`,
    ...(g.reachable && g.error ? [`  note: ${indented(g.error, "    ")}`] : []),
    ...(g.reachable ? [`  ${idleLine(g.idle)}`] : []),
    ...(g.reachable ? [`  ${capLine(report.cap)}`] : []),
    "",
    formatTable(
      [
        { header: "PROFILE", cell: (p) => p.id },
        { header: "SCOPE", cell: (p) => p.scope },
        { header: "SANDBOXES", cell: (p) => (p.sandboxes === null ? "-" : String(p.sandboxes)) },
        { header: "NOTE", cell: (p) => p.note ?? "" },
      ],
      report.profiles,
    ),
    "",
  ];
  if (report.leases.length === 0)
    return [...lines, "No leases: no worker environment and no sandbox of ours."].join("\n");
  const yesNo = (v: boolean | null) => (v === null ? "?" : v ? "on" : "off");
  const table = formatTable(
    [
      { header: "LEASE", cell: (r) => r.leaseId ?? "(provisioning)" },
      { header: "PROFILE", cell: (r) => r.profile ?? "-" },
      { header: "ENVIRONMENT", cell: (r) => r.environmentId ?? "-" },
      { header: "WORKER", cell: (r) => r.workerState ?? (r.destroyedAt ? "destroyed" : "none") },
      { header: "VERCEL", cell: (r) => r.vercel },
      { header: "KEEPALIVE", cell: (r) => yesNo(r.keepalive) },
      { header: "CAP", cell: (r) => r.counted ?? "-" },
      { header: "SESSIONS", cell: (r) => (r.sessions.length > 0 ? r.sessions.join(",") : "-") },
    ],
    report.leases,
  );
  return [...lines, table].join("\n");
}
