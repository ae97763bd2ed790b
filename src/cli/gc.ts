// `openclaw vercel-sandbox gc [--dry-run]`: removes sandboxes tagged with our scope that no lease owns, and
// only with proof that none does:
// - the ledger holds the lease's tombstone (core destroyed it; a late replay re-created the sandbox), or
// - the gateway answered, lists no environment holding the lease (in any state but destroyed), and has no
//   environment of ours still provisioning without a lease id (whose lease could be this one). The gateway is
//   asked only after Vercel listed the sandboxes (observe.ts): a sandbox a provision creates later is not
//   judged, so one being provisioned never looks unowned.
// Anything else is kept, with the reason. Removal is the provider's release with proof of absence: the lease
// is buried first (so no replay re-creates it), the sandbox deleted with the snapshots it owns except those
// the warm-image store retains, and its absence proven before it counts as removed; then, as destroy does,
// the lease's allocation choice is released so it no longer pins an image.

import { messageOf } from "../infra/index.js";
import type { ImageStore } from "../preparation/index.js";
import type { LeaseLedger, Tombstone } from "../provider/index.js";
import { type AbsenceProof, leaseIdOf, ReleaseUnprovenError, releaseSandbox } from "../provider/index.js";
import type { SandboxSummary } from "../vercel/index.js";
import type { GatewayView } from "./gateway.js";
import type { Listing } from "./sandboxes.js";
import { formatTable, indented } from "./table.js";

export interface GcItem {
  profile: string;
  sandboxName: string;
  leaseId: string | null;
  vercel: string;
  reason: string;
}

export interface GcPlan {
  remove: GcItem[];
  keep: GcItem[];
  skipped: Array<{ profile: string; reason: string }>;
}

export interface GcReport {
  dryRun: boolean;
  /** Removed (or, with --dry-run, that would be removed), each with its proof. */
  removed: GcItem[];
  kept: GcItem[];
  /** Removal was attempted and not proven; `reason` says what to do. */
  failed: GcItem[];
  skipped: Array<{ profile: string; reason: string }>;
}

/** Worker states in which an environment may still get a lease id from a provision in flight. */
const SETTLED = new Set(["destroyed", "failed"]);

export function planGc(gateway: GatewayView, listings: readonly Listing[], tombstones: Map<string, Tombstone>): GcPlan {
  const plan: GcPlan = { remove: [], keep: [], skipped: [] };
  const holders = new Map<string, string>();
  let pending = 0;
  if (gateway.reachable) {
    for (const env of gateway.environments) {
      if (env.leaseId && env.state !== "destroyed") holders.set(env.leaseId, `${env.environmentId} (${env.state})`);
      if (!env.leaseId && !SETTLED.has(env.state)) pending += 1;
    }
  }
  for (const listing of listings) {
    if (listing.state === "skipped") plan.skipped.push({ profile: listing.profileId, reason: listing.reason });
    if (listing.state === "failed") {
      plan.skipped.push({ profile: listing.profileId, reason: `${listing.error}. ${listing.remedy}` });
    }
    if (listing.state !== "listed") continue;
    for (const sandbox of listing.sandboxes) {
      const decision = decide(sandbox, { gateway, holders, pending, tombstones });
      const item = { profile: listing.profileId, sandboxName: sandbox.name, vercel: sandbox.status, ...decision.item };
      (decision.remove ? plan.remove : plan.keep).push(item);
    }
  }
  return plan;
}

function decide(
  sandbox: SandboxSummary,
  facts: { gateway: GatewayView; holders: Map<string, string>; pending: number; tombstones: Map<string, Tombstone> },
): { remove: boolean; item: { leaseId: string | null; reason: string } } {
  const leaseId = leaseIdOf(sandbox.name) ?? null;
  const keep = (reason: string) => ({ remove: false, item: { leaseId, reason } });
  if (!leaseId) return keep("its name is not one of our lease names; remove it yourself if you know it is unused");
  const holder = facts.holders.get(leaseId);
  if (holder) return keep(`owned by environment ${holder}`);
  const tombstone = facts.tombstones.get(leaseId);
  if (tombstone) {
    const at = new Date(tombstone.destroyedAt).toISOString();
    return { remove: true, item: { leaseId, reason: `the gateway destroyed lease ${leaseId} at ${at}` } };
  }
  if (!facts.gateway.reachable) {
    return keep(`no proof it is unowned: the gateway is not reachable to list its leases. ${facts.gateway.remedy}`);
  }
  if (facts.pending > 0) {
    return keep(
      `no proof it is unowned: ${facts.pending} environment(s) are still provisioning without a lease id; ` +
        "run gc again once they are ready",
    );
  }
  return { remove: true, item: { leaseId, reason: "no environment of the running gateway holds this lease" } };
}

export interface GcDeps {
  ledger: LeaseLedger;
  /** The warm-image store: the snapshots it refers to are never deleted with a sandbox. */
  images: Pick<ImageStore, "retainedSnapshotIds" | "releaseChoice">;
  absenceProof?: AbsenceProof;
}

export async function runGc(plan: GcPlan, listings: readonly Listing[], deps: GcDeps, dryRun: boolean) {
  const report: GcReport = { dryRun, removed: [], kept: plan.keep, failed: [], skipped: plan.skipped };
  if (dryRun) return { ...report, removed: plan.remove };
  const projects = new Map(listings.flatMap((l) => (l.state === "listed" ? [[l.profileId, l.project] as const] : [])));
  for (const item of plan.remove) {
    const project = projects.get(item.profile);
    if (!project || !item.leaseId) continue;
    try {
      await deps.ledger.bury(item.leaseId, item.sandboxName);
      await releaseSandbox(
        project,
        item.sandboxName,
        () => deps.images.retainedSnapshotIds(),
        undefined,
        deps.absenceProof,
      );
      await deps.ledger.markAbsent(item.leaseId);
      // As the provider's destroy does: the lease is gone, so it no longer pins the image it started from.
      await deps.images.releaseChoice(item.leaseId);
      report.removed.push(item);
    } catch (error) {
      const next =
        error instanceof ReleaseUnprovenError
          ? "the delete was accepted but absence is not proven yet: run gc again in a minute"
          : "run gc again; if it keeps failing, run `openclaw vercel-sandbox doctor`";
      report.failed.push({ ...item, reason: `${messageOf(error)}; ${next}` });
    }
  }
  return report;
}

export function renderGc(report: GcReport): string {
  const verb = report.dryRun ? "would remove" : "removed";
  const rows = [
    ...report.removed.map((i) => ({ ...i, action: verb })),
    ...report.failed.map((i) => ({ ...i, action: "FAILED" })),
    ...report.kept.map((i) => ({ ...i, action: "kept" })),
  ];
  const lines = [
    `${report.dryRun ? "Dry run: " : ""}${report.removed.length} ${verb}, ${report.failed.length} failed, ` +
      `${report.kept.length} kept.`,
  ];
  if (rows.length > 0) {
    lines.push(
      "",
      formatTable(
        [
          { header: "ACTION", cell: (r) => r.action },
          { header: "PROFILE", cell: (r) => r.profile },
          { header: "SANDBOX", cell: (r) => r.sandboxName },
          { header: "VERCEL", cell: (r) => r.vercel },
          { header: "REASON", cell: (r) => r.reason },
        ],
        rows,
      ),
    );
  }
  for (const s of report.skipped) lines.push(`skipped profile ${s.profile}: ${indented(s.reason, "  ")}`);
  if (report.dryRun && report.removed.length > 0) lines.push("", "Run without --dry-run to remove them.");
  return lines.join("\n");
}
