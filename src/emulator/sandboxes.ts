// Sandbox endpoints S1–S6 (create on /v3 and the legacy /v2 runtime path, get with and
// without resume, list with filters and cursors, patch, delete, fork). Every body is validated
// before any side effect (sandbox-settings.ts), so a bad request is a 400 and the SDK's POST
// retries never double-create. Create, fork and delete hold their sandbox name (Registry.withName),
// and every incarnation of a name gets a directory of its own, so a delete racing a create of the
// same name cannot wipe the new sandbox; a create whose boot fails releases the name and its files.
import { randomBytes } from "node:crypto";
import { rm } from "node:fs/promises";
import { assertProject } from "./auth.js";
import type { Ctx } from "./context.js";
import { sandboxOr404 } from "./context.js";
import { mountsOf } from "./drives.js";
import { badRequest, field, HttpError, notFound, readJson, sendJson } from "./http.js";
import { imageRef, routesOf, sandboxPayload, sessionPayload } from "./payloads.js";
import { newId, paginate, type SandboxRecord, type SessionRecord, sortBy } from "./registry.js";
import {
  nameOf,
  policyOf,
  portsOf,
  refuseNetworkId,
  regionsOf,
  type SandboxSettings,
  settingsOf,
  tagsOf,
  vcpusOf,
} from "./sandbox-settings.js";

const DEFAULT_IMAGE = "vercel/sandbox/universal:latest";

export function sandboxAndSession(ctx: Ctx, sandbox: SandboxRecord, session: SessionRecord, resumed?: boolean) {
  const body: Record<string, unknown> = {
    sandbox: sandboxPayload(sandbox, session),
    session: sessionPayload(session),
    routes: routesOf(sandbox),
  };
  if (resumed !== undefined) body.resumed = resumed;
  sendJson(ctx.res, 200, body);
}

function newSandbox(ctx: Ctx, name: string, projectId: string, settings: SandboxSettings): SandboxRecord {
  const now = Date.now();
  return {
    name,
    projectId,
    ...settings,
    createdAt: now,
    updatedAt: now,
    statusUpdatedAt: now,
    currentSessionId: "",
    // One directory per incarnation: a late cleanup of an earlier sandbox of this name never hits it.
    dir: `${ctx.lifecycle.sandboxDir(name)}~${randomBytes(6).toString("hex")}`,
    // Free until bootNew registers the sandbox, which follows without a pause (no await in between).
    idBase: ctx.registry.freeIdBase(),
  };
}

function assertNameFree(ctx: Ctx, name: string): void {
  if (ctx.registry.sandboxes.has(name))
    throw new HttpError(409, "sandbox_already_exists", `Sandbox ${name} already exists`);
}

const generatedName = () => newId("sandbox").toLowerCase().replace("_", "-");

/** Undoes a create whose boot failed: the name is free again and nothing of it stays behind. */
async function releaseFailed(ctx: Ctx, sandbox: SandboxRecord): Promise<void> {
  if (ctx.registry.sandboxes.get(sandbox.name) === sandbox) ctx.registry.sandboxes.delete(sandbox.name);
  const session = ctx.registry.sessions.get(sandbox.currentSessionId);
  if (session?.sandboxName === sandbox.name) {
    await ctx.lifecycle.stop(session).catch(() => {});
    ctx.registry.sessions.delete(session.id);
  }
  await rm(sandbox.dir, { recursive: true, force: true });
}

/** Call with the name held: registers the sandbox, fills its layer and boots its first session. */
async function bootNew(ctx: Ctx, sandbox: SandboxRecord, fromSnapshot: string | undefined, forkOf?: SandboxRecord) {
  ctx.registry.sandboxes.set(sandbox.name, sandbox);
  let session: SessionRecord;
  try {
    session = await ctx.lifecycle.start(sandbox, fromSnapshot, forkOf);
  } catch (error) {
    await releaseFailed(ctx, sandbox);
    if (error instanceof HttpError) throw error;
    // A 4xx, not a 5xx: the SDK retries 5xx, and this boot would fail the same way again.
    throw new HttpError(
      422,
      "sandbox_boot_failed",
      `Could not prepare the sandbox's filesystem: ${(error as Error).message}`,
    );
  }
  sandboxAndSession(ctx, sandbox, session);
}

/** A snapshot that once existed (deleted or expired) is 410 `snapshot_not_found`, as Vercel answers; one never seen is 404. */
function snapshotGone(ctx: Ctx, id: string | undefined): HttpError {
  const known = id !== undefined && ctx.registry.snapshots.has(id);
  return known
    ? new HttpError(410, "snapshot_not_found", `Snapshot ${id} was deleted or has expired`)
    : new HttpError(404, "snapshot_not_found", `Snapshot ${id} was not found`);
}

/** S1: POST /v3/sandboxes, or /v2/sandboxes when `runtime` is set. */
export async function createSandbox(ctx: Ctx): Promise<void> {
  const body = await readJson(ctx.req);
  const projectId = field.string(body, "projectId");
  if (!projectId) throw badRequest("`projectId` is required");
  assertProject(ctx.scope, projectId);
  const settings = settingsOf(body);
  ctx.drives.assertExist(settings.mounts);
  const runtime = field.string(body, "runtime");
  const image = field.string(body, "image");
  const source = field.object(body, "source");
  let fromSnapshot: string | undefined;
  if (source) {
    if (source.type === "snapshot") {
      fromSnapshot = field.string(source, "snapshotId");
      if (!ctx.registry.liveSnapshot(fromSnapshot)) throw snapshotGone(ctx, fromSnapshot);
    } else {
      throw badRequest(
        `The emulator cannot fetch a \`${String(source.type)}\` source (it has no network); use a snapshot`,
      );
    }
  }
  const name = nameOf(body, generatedName);
  await ctx.registry.withName(name, async () => {
    assertNameFree(ctx, name);
    const sandbox = newSandbox(ctx, name, projectId, settings);
    if (runtime) sandbox.runtime = runtime;
    else if (!fromSnapshot) sandbox.image = imageRef(image ?? DEFAULT_IMAGE);
    sandbox.baseSnapshotId = fromSnapshot;
    await bootNew(ctx, sandbox, fromSnapshot);
  });
}

/**
 * S6: POST /v2/sandboxes/{source}/fork. As the SDK documents it, the fork starts from the source's current
 * snapshot; without one, from its base environment. A persistent sandbox's current snapshot is its last
 * snapshot, the one Vercel takes at each stop included (lifecycle.ts `stopKeeping`), so such a source's fork starts
 * from its files as its last stop or snapshot left them, whether it runs again or not; never stopped nor
 * snapshotted (or its current snapshot deleted), from its own chain (layer-manager.ts `forkLayer`). A sandbox that is
 * not persistent keeps nothing past a stop, so its fork starts from its base environment: the snapshot it was
 * created from, or the image.
 */
export async function forkSandbox(ctx: Ctx): Promise<void> {
  const source = sandboxOr404(ctx, ctx.params[0]);
  const body = await readJson(ctx.req);
  const settings = settingsOf(body, source);
  ctx.drives.assertExist(settings.mounts);
  const name = nameOf(body, generatedName);
  await ctx.registry.withName(name, async () => {
    assertNameFree(ctx, name);
    const sandbox = newSandbox(ctx, name, source.projectId, settings);
    sandbox.runtime = source.runtime;
    sandbox.image = source.image;
    const snap = ctx.registry.liveSnapshot(source.currentSnapshotId);
    sandbox.baseSnapshotId = snap?.id ?? source.baseSnapshotId;
    if (source.persistent && !snap) {
      await bootNew(ctx, sandbox, undefined, source);
      return;
    }
    if (snap) {
      await bootNew(ctx, sandbox, snap.id);
      return;
    }
    const base = source.baseSnapshotId;
    if (base && !ctx.registry.liveSnapshot(base)) throw snapshotGone(ctx, base);
    await bootNew(ctx, sandbox, base);
  });
}

/** S2: GET /v2/sandboxes/{name}[?resume=true]. */
export async function getSandbox(ctx: Ctx): Promise<void> {
  const sandbox = sandboxOr404(ctx, ctx.params[0]);
  if (ctx.url.searchParams.get("resume") === "true") {
    const { session, resumed } = await ctx.lifecycle.resume(sandbox);
    sandboxAndSession(ctx, sandbox, session, resumed);
    return;
  }
  ctx.lifecycle.assertRestorable(sandbox);
  const session = ctx.registry.sessions.get(sandbox.currentSessionId);
  if (!session) throw notFound(`Session of sandbox ${sandbox.name}`);
  sandboxAndSession(ctx, sandbox, session, false);
}

/** S3: GET /v2/sandboxes with `namePrefix`, one `tags=key:value`, sorting and cursor. */
export async function listSandboxes(ctx: Ctx): Promise<void> {
  const q = ctx.url.searchParams;
  const prefix = q.get("namePrefix");
  const tagFilters = q.getAll("tags").map((t) => {
    const i = t.indexOf(":");
    return i < 0 ? [t, undefined] : [t.slice(0, i), t.slice(i + 1)];
  });
  let items = [...ctx.registry.sandboxes.values()].filter(
    (s) =>
      (!prefix || s.name.startsWith(prefix)) &&
      tagFilters.every(([k, v]) => s.tags && k! in s.tags && (v === undefined || s.tags[k!] === v)),
  );
  const key = q.get("sortBy");
  items = sortBy(
    items,
    (s) => (key === "name" ? s.name : key === "statusUpdatedAt" ? s.statusUpdatedAt : s.createdAt),
    q.get("sortOrder"),
  );
  const { page, pagination } = paginate(items, q);
  sendJson(ctx.res, 200, {
    sandboxes: page.map((s) => sandboxPayload(s, ctx.registry.sessions.get(s.currentSessionId))),
    pagination,
  });
}

/** S4: PATCH /v2/sandboxes/{name}: missing keys are unchanged; settings apply to the next session. */
export async function updateSandbox(ctx: Ctx): Promise<void> {
  const sandbox = sandboxOr404(ctx, ctx.params[0]);
  const body = await readJson(ctx.req);
  refuseNetworkId(body);
  const mounts = mountsOf(body);
  ctx.drives.assertExist(mounts);
  const regions = regionsOf(body, sandbox);
  const ports = portsOf(body);
  const policy = policyOf(body);
  const tags = tagsOf(body);
  const vcpus = vcpusOf(body);
  const timeout = field.number(body, "timeout");
  const persistent = field.boolean(body, "persistent");
  const snapshotExpiration = field.number(body, "snapshotExpiration");
  const restore = field.string(body, "currentSnapshotId");
  if (restore && !ctx.registry.liveSnapshot(restore)) throw snapshotGone(ctx, restore);
  const keep = body.keepLastSnapshots === null ? null : field.object(body, "keepLastSnapshots");
  if (ports) sandbox.ports = ports;
  if (policy) sandbox.networkPolicy = policy;
  if (tags) sandbox.tags = tags;
  if (vcpus) sandbox.vcpus = vcpus;
  if (timeout !== undefined) sandbox.timeout = timeout;
  if (persistent !== undefined) sandbox.persistent = persistent;
  if (snapshotExpiration !== undefined) sandbox.snapshotExpiration = snapshotExpiration;
  if (mounts) sandbox.mounts = Object.keys(mounts).length > 0 ? mounts : undefined;
  sandbox.region = regions.region;
  sandbox.failoverRegions = regions.failoverRegions;
  if (restore) {
    sandbox.currentSnapshotId = restore;
    sandbox.pendingRestore = restore;
  }
  if (keep === null) sandbox.keepLastSnapshots = undefined;
  else if (keep) sandbox.keepLastSnapshots = keep;
  sandbox.updatedAt = Date.now();
  const session = ctx.registry.sessions.get(sandbox.currentSessionId);
  const out: Record<string, unknown> = { sandbox: sandboxPayload(sandbox, session) };
  if (ports) out.routes = routesOf(sandbox);
  sendJson(ctx.res, 200, out);
}

/** S5: DELETE /v2/sandboxes/{name}[?deleteOrphanSnapshots=true]; holds the name until the files are gone. */
export async function deleteSandbox(ctx: Ctx): Promise<void> {
  const name = ctx.params[0] ?? "";
  await ctx.registry.withName(name, async () => {
    const sandbox = sandboxOr404(ctx, name);
    await ctx.lifecycle.deleteSandbox(sandbox, ctx.url.searchParams.get("deleteOrphanSnapshots") === "true");
    sendJson(ctx.res, 200, {
      sandbox: sandboxPayload(sandbox, ctx.registry.sessions.get(sandbox.currentSessionId)),
    });
  });
}
