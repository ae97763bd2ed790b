// The drive endpoints (SDK 3.3+): list, get or create, get, delete. The drives themselves, and what a session's
// boot claims and attaches, are the emulator's state (drives.ts, `ctx.drives`).
import { randomBytes } from "node:crypto";
import { mkdir, rm } from "node:fs/promises";
import path from "node:path";
import { assertProject } from "./auth.js";
import type { Ctx } from "./context.js";
import { driveNotFound } from "./drives.js";
import { badRequest, field, HttpError, readJson, sendJson } from "./http.js";
import { paginate, sortBy } from "./registry.js";

const DEFAULT_MAX_SIZE = 10 * 1024 * 1024 * 1024;

/** GET /v2/sandboxes/drives[?namePrefix&sortBy&sortOrder&limit&cursor]. */
export async function listDrives(ctx: Ctx): Promise<void> {
  const q = ctx.url.searchParams;
  const prefix = q.get("namePrefix");
  const items = sortBy(
    [...ctx.drives.drives.values()].filter((d) => !prefix || d.name.startsWith(prefix)),
    (d) => (q.get("sortBy") === "name" ? d.name : d.createdAt),
    q.get("sortOrder"),
  );
  const { page, pagination } = paginate(items, q);
  sendJson(ctx.res, 200, { drives: page.map((d) => ctx.drives.payload(d)), pagination });
}

/** POST /v2/sandboxes/drives/{name}: the drive, created first if it does not exist. */
export async function getOrCreateDrive(ctx: Ctx): Promise<void> {
  const name = ctx.params[0] ?? "";
  const body = await readJson(ctx.req);
  assertProject(ctx.scope, field.string(body, "projectId") ?? ctx.scope.projectId);
  if (!/^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/.test(name)) throw badRequest(`Invalid drive name: ${name}`);
  let drive = ctx.drives.drives.get(name);
  if (!drive) {
    const id = `drv_${randomBytes(12).toString("hex")}`;
    const dir = path.join(ctx.drives.dataDir, "drives", id);
    await mkdir(dir, { recursive: true, mode: 0o755 });
    const now = Date.now();
    drive = {
      id,
      name,
      projectId: ctx.scope.projectId,
      region: field.string(body, "region") ?? "iad1",
      maxSizeBytes: field.number(body, "maxSizeBytes") ?? DEFAULT_MAX_SIZE,
      createdAt: now,
      updatedAt: now,
      dir,
    };
    ctx.drives.drives.set(name, drive);
  }
  sendJson(ctx.res, 200, { drive: ctx.drives.payload(drive) });
}

/** GET /v2/sandboxes/drives/{name}. */
export async function getDrive(ctx: Ctx): Promise<void> {
  const drive = ctx.drives.drives.get(ctx.params[0] ?? "");
  if (!drive) throw driveNotFound(ctx.params[0] ?? "");
  sendJson(ctx.res, 200, { drive: ctx.drives.payload(drive) });
}

/** DELETE /v2/sandboxes/drives/{name}: refused while attached; the data is gone for good. */
export async function deleteDrive(ctx: Ctx, running: (sessionId: string) => boolean): Promise<void> {
  const name = ctx.params[0] ?? "";
  const drive = ctx.drives.drives.get(name);
  if (!drive) throw driveNotFound(name);
  // Held by any session not stopped (a booting one too), whatever the route counts as running.
  const holder = drive.attached;
  if (holder && (running(holder.sessionId) || ctx.drives.live(holder.sessionId)))
    throw new HttpError(409, "drive_in_use", `Drive ${name} is attached to sandbox ${holder.sandboxName}`);
  if (drive.copying) throw new HttpError(409, "drive_in_use", `Drive ${name} is being copied for a snapshot mount`);
  ctx.drives.drives.delete(name);
  await rm(drive.dir, { recursive: true, force: true });
  drive.updatedAt = Date.now();
  sendJson(ctx.res, 200, { drive: ctx.drives.payload(drive) });
}
