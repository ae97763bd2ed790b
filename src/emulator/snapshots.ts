// Snapshot endpoints P1–P4. As on Vercel, a deleted (or expired) snapshot stays visible: it
// lists and gets with `status: "deleted"` (the provider's retention relies on that status), while
// creating or restoring from it answers `snapshot_not_found`. Deleting it again is a no-op 200.
// The tree walks only live snapshots; its paginator sends `pagination.next` back as `snapshotId`.
import type { Ctx } from "./context.js";
import { notFound, sendJson } from "./http.js";
import { snapshotPayload } from "./payloads.js";
import { paginate, type SnapshotRecord, sortBy } from "./registry.js";

function live(ctx: Ctx): SnapshotRecord[] {
  return [...ctx.registry.snapshots.values()].filter((s) => ctx.registry.liveSnapshot(s.id));
}

/** P1: GET /v2/sandboxes/snapshots?name=…, deleted ones included. */
export async function listSnapshots(ctx: Ctx): Promise<void> {
  const q = ctx.url.searchParams;
  const name = q.get("name");
  const items = sortBy(
    [...ctx.registry.snapshots.values()].filter((s) => !name || s.sandboxName === name),
    (s) => s.createdAt,
    q.get("sortOrder"),
  );
  const { page, pagination } = paginate(items, q);
  sendJson(ctx.res, 200, { snapshots: page.map(snapshotPayload), pagination });
}

/** P2: GET /v2/sandboxes/snapshots/tree?snapshotId=…: ancestors (desc) or descendants (asc). */
export async function snapshotTree(ctx: Ctx): Promise<void> {
  const q = ctx.url.searchParams;
  const all = live(ctx);
  const limit = Math.min(Math.max(Number(q.get("limit") ?? 20) || 20, 1), 100);
  const byId = new Map(all.map((s) => [s.id, s]));
  const childrenOf = (id: string | undefined) => all.filter((s) => s.parentId === id);
  const node = (s: SnapshotRecord) => {
    const siblings = childrenOf(s.parentId).filter((x) => x.id !== s.id);
    return { snapshot: snapshotPayload(s), siblings: siblings.map(snapshotPayload), count: String(siblings.length) };
  };
  const anchorId = q.get("snapshotId");
  const anchor = anchorId ? byId.get(anchorId) : undefined;
  if (anchorId && !anchor) throw notFound(`Snapshot ${anchorId}`);
  const chain: SnapshotRecord[] = [];
  let cursor = anchor;
  const asc = q.get("sortOrder") === "asc";
  while (cursor && chain.length <= limit) {
    chain.push(cursor);
    cursor = asc ? childrenOf(cursor.id)[0] : cursor.parentId ? byId.get(cursor.parentId) : undefined;
  }
  const page = anchor ? chain.slice(0, limit) : sortBy(all, (s) => s.createdAt, "desc").slice(0, limit);
  const next = anchor && chain.length > limit ? chain[limit]!.id : null;
  const body: Record<string, unknown> = { snapshots: page.map(node), pagination: { count: page.length, next } };
  if (anchor) body.anchor = node(anchor);
  sendJson(ctx.res, 200, body);
}

function knownSnapshot(ctx: Ctx, id: string | undefined): SnapshotRecord {
  const snap = id === undefined ? undefined : ctx.registry.snapshots.get(id);
  if (!snap) throw notFound(`Snapshot ${id}`);
  return snap;
}

/** P3: GET /v2/sandboxes/snapshots/{id}, deleted ones included. */
export async function getSnapshot(ctx: Ctx): Promise<void> {
  sendJson(ctx.res, 200, { snapshot: snapshotPayload(knownSnapshot(ctx, ctx.params[0])) });
}

/** P4: DELETE /v2/sandboxes/snapshots/{id}; an expired snapshot's files are removed now. */
export async function deleteSnapshot(ctx: Ctx): Promise<void> {
  const snap = knownSnapshot(ctx, ctx.params[0]);
  if (snap.status === "created") await ctx.lifecycle.deleteSnapshot(snap);
  sendJson(ctx.res, 200, { snapshot: snapshotPayload(snap) });
}
