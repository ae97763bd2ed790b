// Session endpoints E1–E7. Stop is idempotent (the SDK does not wrap it in auto-resume) and, for a persistent
// sandbox, answers the snapshot it took (lifecycle.ts `stopKeeping`);
// extend-timeout re-arms the timer that stops the session when its lifetime ends; the
// network policy is recorded and echoed in the legacy shape and enforced (see isolation.ts:
// the egress proxy reads it per connection, commands pick their namespace at start);
// snapshot stops the session first. E7 (interactive) is interactive.ts.
import type { Ctx } from "./context.js";
import { runningSession, sessionOr404 } from "./context.js";
import { syncDirectRoutes } from "./egress-routes.js";
import { badRequest, field, readJson, sendJson } from "./http.js";
import { routesOf, sandboxPayload, sessionPayload, snapshotPayload } from "./payloads.js";
import { paginate, sortBy } from "./registry.js";
import { checkedRules } from "./sandbox-settings.js";

function sandboxOf(ctx: Ctx, sandboxName: string) {
  return ctx.registry.sandboxes.get(sandboxName);
}

/** E1: GET /v2/sandboxes/sessions/{sid} (3.2.1 polls it while a session is stopping). */
export async function getSession(ctx: Ctx): Promise<void> {
  const session = sessionOr404(ctx, ctx.params[0]);
  const sandbox = sandboxOf(ctx, session.sandboxName);
  sendJson(ctx.res, 200, { session: sessionPayload(session), routes: sandbox ? routesOf(sandbox) : [] });
}

/** E2: GET /v2/sandboxes/sessions?name=… */
export async function listSessions(ctx: Ctx): Promise<void> {
  const q = ctx.url.searchParams;
  const name = q.get("name");
  const items = sortBy(
    [...ctx.registry.sessions.values()].filter((s) => !name || s.sandboxName === name),
    (s) => s.createdAt,
    q.get("sortOrder"),
  );
  const { page, pagination } = paginate(items, q);
  sendJson(ctx.res, 200, { sessions: page.map(sessionPayload), pagination });
}

/** E3: POST …/sessions/{sid}/stop. */
export async function stopSession(ctx: Ctx): Promise<void> {
  const session = sessionOr404(ctx, ctx.params[0]);
  await readJson(ctx.req);
  const snapshot = await ctx.lifecycle.stopKeeping(session);
  const sandbox = sandboxOf(ctx, session.sandboxName);
  const body: Record<string, unknown> = { session: sessionPayload(session) };
  if (sandbox) body.sandbox = sandboxPayload(sandbox, ctx.registry.sessions.get(sandbox.currentSessionId));
  if (snapshot) body.snapshot = snapshotPayload(snapshot);
  sendJson(ctx.res, 200, body);
}

/** E4: POST …/sessions/{sid}/extend-timeout {duration}. */
export async function extendTimeout(ctx: Ctx): Promise<void> {
  const session = runningSession(ctx, ctx.params[0]);
  const duration = field.number(await readJson(ctx.req), "duration");
  if (duration === undefined) throw badRequest("`duration` is required");
  session.timeout += duration;
  session.updatedAt = Date.now();
  ctx.lifecycle.armTimeout(session);
  sendJson(ctx.res, 200, { session: sessionPayload(session) });
}

/** E5: POST …/sessions/{sid}/network-policy with the bare request-shape policy. */
export async function updateNetworkPolicy(ctx: Ctx): Promise<void> {
  const session = runningSession(ctx, ctx.params[0]);
  const body = await readJson(ctx.req);
  if (body.mode !== undefined && body.mode !== "allow-all" && body.mode !== "deny-all") {
    throw badRequest("`mode` must be allow-all or deny-all");
  }
  checkedRules(body);
  session.networkPolicy = body;
  session.updatedAt = Date.now();
  await syncDirectRoutes(session);
  sendJson(ctx.res, 200, { session: sessionPayload(session) });
}

/** E6: POST …/sessions/{sid}/snapshot [{expiration}]. */
export async function snapshotSession(ctx: Ctx): Promise<void> {
  const session = runningSession(ctx, ctx.params[0]);
  const expiration = field.number(await readJson(ctx.req), "expiration");
  const sandbox = sandboxOf(ctx, session.sandboxName);
  if (!sandbox) throw badRequest(`The sandbox of session ${session.id} was deleted`);
  const snapshot = await ctx.lifecycle.snapshot(sandbox, session, expiration);
  sendJson(ctx.res, 200, { snapshot: snapshotPayload(snapshot), session: sessionPayload(session) });
}
