// Snapshot endpoints P1–P4. Deleted or expired snapshots answer 404 on get and drop out of
// lists; the tree's paginator sends `pagination.next` back as the next `snapshotId`.
import type { Ctx } from "./context.js";
import { notFound, sendJson } from "./http.js";
import { snapshotPayload } from "./payloads.js";
import { paginate, type SnapshotRecord, sortBy } from "./registry.js";

function live(ctx: Ctx): SnapshotRecord[] {
  return [...ctx.registry.snapshots.values()].filter((s) => ctx.registry.liveSnapshot(s.id));
}

/** P1: GET /v2/sandboxes/snapshots?name=… */
export async function listSnapshots(ctx: Ctx): Promise<void> {
  const q = ctx.url.searchParams;
  const name = q.get("name");
  const items = sortBy(
    live(ctx).filter((s) => !name || s.sandboxName === name),
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

/** P3: GET /v2/sandboxes/snapshots/{id}. */
export async function getSnapshot(ctx: Ctx): Promise<void> {
  const snap = ctx.registry.liveSnapshot(ctx.params[0]);
  if (!snap) throw notFound(`Snapshot ${ctx.params[0]}`);
  sendJson(ctx.res, 200, { snapshot: snapshotPayload(snap) });
}

/** P4: DELETE /v2/sandboxes/snapshots/{id}. */
export async function deleteSnapshot(ctx: Ctx): Promise<void> {
  const snap = ctx.registry.liveSnapshot(ctx.params[0]);
  if (!snap) throw notFound(`Snapshot ${ctx.params[0]}`);
  await ctx.lifecycle.deleteSnapshot(snap);
  sendJson(ctx.res, 200, { snapshot: snapshotPayload(snap) });
}
