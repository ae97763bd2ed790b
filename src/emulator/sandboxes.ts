// Sandbox endpoints S1–S6 (create on /v3 and the legacy /v2 runtime path, get with and
// without resume, list with filters and cursors, patch, delete, fork). Every body is validated
// before any side effect, so a bad request is a 400 and the SDK's POST retries never double-create.
import type { Ctx } from "./context.js";
import { sandboxOr404 } from "./context.js";
import { badRequest, field, HttpError, notFound, readJson, sendJson } from "./http.js";
import { imageRef, routesOf, sandboxPayload, sessionPayload } from "./payloads.js";
import { newId, paginate, type SandboxRecord, type SessionRecord, sortBy } from "./registry.js";

const DEFAULT_TIMEOUT = 5 * 60 * 1000;
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

function policyOf(body: Record<string, unknown>): Record<string, unknown> | undefined {
  const p = body.networkPolicy;
  if (p === undefined || p === null) return undefined;
  if (p === "allow-all" || p === "deny-all") return { mode: p };
  if (typeof p !== "object" || Array.isArray(p)) throw badRequest("`networkPolicy` must be an object");
  return p as Record<string, unknown>;
}

function portsOf(body: Record<string, unknown>): number[] | undefined {
  const v = body.ports;
  if (v === undefined || v === null) return undefined;
  if (!Array.isArray(v) || v.length > 15 || v.some((p) => !Number.isInteger(p) || p < 1 || p > 65535)) {
    throw badRequest("`ports` must be at most 15 port numbers");
  }
  return v as number[];
}

function tagsOf(body: Record<string, unknown>): Record<string, string> | undefined {
  const tags = field.stringRecord(body, "tags");
  if (tags && Object.keys(tags).length > 5) throw badRequest("At most 5 tags are allowed");
  return tags;
}

function vcpusOf(body: Record<string, unknown>): number | undefined {
  const resources = field.object(body, "resources");
  return resources ? field.number(resources, "vcpus") : undefined;
}

/** The settings shared by create and fork, validated; `base` supplies fork's inherited values. */
function settingsOf(body: Record<string, unknown>, base?: SandboxRecord) {
  return {
    persistent: field.boolean(body, "persistent") ?? base?.persistent ?? true,
    region: field.string(body, "region") ?? base?.region ?? "iad1",
    vcpus: vcpusOf(body) ?? base?.vcpus ?? 2,
    timeout: field.number(body, "timeout") ?? base?.timeout ?? DEFAULT_TIMEOUT,
    ports: portsOf(body) ?? base?.ports ?? [],
    env: field.stringRecord(body, "env") ?? base?.env ?? {},
    tags: tagsOf(body) ?? base?.tags,
    networkPolicy: policyOf(body) ?? base?.networkPolicy ?? { mode: "allow-all" },
    snapshotExpiration: field.number(body, "snapshotExpiration") ?? base?.snapshotExpiration,
    keepLastSnapshots: field.object(body, "keepLastSnapshots") ?? base?.keepLastSnapshots,
  };
}

function newSandbox(ctx: Ctx, name: string, projectId: string, settings: ReturnType<typeof settingsOf>): SandboxRecord {
  const now = Date.now();
  return {
    name,
    projectId,
    ...settings,
    createdAt: now,
    updatedAt: now,
    statusUpdatedAt: now,
    currentSessionId: "",
    dir: ctx.lifecycle.sandboxDir(name),
  };
}

function claimName(ctx: Ctx, body: Record<string, unknown>): string {
  const name = field.string(body, "name") ?? newId("sandbox").toLowerCase().replace("_", "-");
  if (!/^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/.test(name)) throw badRequest(`Invalid sandbox name: ${name}`);
  if (ctx.registry.sandboxes.has(name))
    throw new HttpError(409, "sandbox_already_exists", `Sandbox ${name} already exists`);
  return name;
}

async function bootNew(
  ctx: Ctx,
  sandbox: SandboxRecord,
  fromSnapshot: string | undefined,
  copyLayerOf?: SandboxRecord,
) {
  ctx.registry.sandboxes.set(sandbox.name, sandbox);
  if (copyLayerOf) await ctx.lifecycle.copyLayer(copyLayerOf, sandbox);
  else await ctx.lifecycle.resetLayers(sandbox, fromSnapshot);
  const session = await ctx.lifecycle.boot(sandbox, fromSnapshot);
  sandboxAndSession(ctx, sandbox, session);
}

/** S1: POST /v3/sandboxes, or /v2/sandboxes when `runtime` is set. */
export async function createSandbox(ctx: Ctx): Promise<void> {
  const body = await readJson(ctx.req);
  const settings = settingsOf(body);
  const runtime = field.string(body, "runtime");
  const image = field.string(body, "image");
  const source = field.object(body, "source");
  let fromSnapshot: string | undefined;
  if (source) {
    if (source.type === "snapshot") {
      fromSnapshot = field.string(source, "snapshotId");
      if (!ctx.registry.liveSnapshot(fromSnapshot)) {
        throw new HttpError(404, "snapshot_not_found", `Snapshot ${fromSnapshot} was not found`);
      }
    } else {
      throw badRequest(
        `The emulator cannot fetch a \`${String(source.type)}\` source (it has no network); use a snapshot`,
      );
    }
  }
  const name = claimName(ctx, body);
  const sandbox = newSandbox(ctx, name, field.string(body, "projectId") ?? "", settings);
  if (runtime) sandbox.runtime = runtime;
  else if (!fromSnapshot) sandbox.image = imageRef(image ?? DEFAULT_IMAGE);
  sandbox.baseSnapshotId = fromSnapshot;
  await bootNew(ctx, sandbox, fromSnapshot);
}

/** S6: POST /v2/sandboxes/{source}/fork: from the source's current snapshot, else its current files. */
export async function forkSandbox(ctx: Ctx): Promise<void> {
  const source = sandboxOr404(ctx, ctx.params[0]);
  const body = await readJson(ctx.req);
  const settings = settingsOf(body, source);
  const name = claimName(ctx, body);
  const sandbox = newSandbox(ctx, name, source.projectId, settings);
  sandbox.runtime = source.runtime;
  sandbox.image = source.image;
  const snap = ctx.registry.liveSnapshot(source.currentSnapshotId);
  sandbox.baseSnapshotId = snap?.id ?? source.baseSnapshotId;
  await bootNew(ctx, sandbox, snap?.id, snap ? undefined : source);
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
  const ports = portsOf(body);
  const policy = policyOf(body);
  const tags = tagsOf(body);
  const vcpus = vcpusOf(body);
  const timeout = field.number(body, "timeout");
  const persistent = field.boolean(body, "persistent");
  const snapshotExpiration = field.number(body, "snapshotExpiration");
  const region = field.string(body, "region");
  const restore = field.string(body, "currentSnapshotId");
  if (restore && !ctx.registry.liveSnapshot(restore))
    throw new HttpError(404, "snapshot_not_found", `Snapshot ${restore} was not found`);
  const keep = body.keepLastSnapshots === null ? null : field.object(body, "keepLastSnapshots");
  if (ports) sandbox.ports = ports;
  if (policy) sandbox.networkPolicy = policy;
  if (tags) sandbox.tags = tags;
  if (vcpus) sandbox.vcpus = vcpus;
  if (timeout !== undefined) sandbox.timeout = timeout;
  if (persistent !== undefined) sandbox.persistent = persistent;
  if (snapshotExpiration !== undefined) sandbox.snapshotExpiration = snapshotExpiration;
  if (region) sandbox.region = region;
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

/** S5: DELETE /v2/sandboxes/{name}[?deleteOrphanSnapshots=true]. */
export async function deleteSandbox(ctx: Ctx): Promise<void> {
  const sandbox = sandboxOr404(ctx, ctx.params[0]);
  await ctx.lifecycle.deleteSandbox(sandbox, ctx.url.searchParams.get("deleteOrphanSnapshots") === "true");
  sendJson(ctx.res, 200, { sandbox: sandboxPayload(sandbox, ctx.registry.sessions.get(sandbox.currentSessionId)) });
}
