// Drives (SDK 3.3+): persistent volumes of the project that outlive sandboxes and mount into them. A drive
// is a directory under `<dataDir>/drives`; `mounts` on create or update ({"/path": {drive, mode}}) apply to
// the sandbox's next session: the holder (isolation.ts) binds a `read-write` drive itself at the path, and a
// `snapshot` (read-only) mount gets a private copy of the drive as it is at boot, mounted read-only. A
// read-write drive is attached to one running session at a time (`currentSessionId`); another boot that
// wants it is refused with 409 `drive_in_use`, as is deleting it while attached. Files keep their owners
// as the sandbox sees them: the drive's files move to the id range of the sandbox that mounts it
// (host-tree.ts). Drive contents are not part of a sandbox's snapshots. `maxSizeBytes` is recorded,
// not enforced (the data dir's filesystem is the limit).
import { randomBytes } from "node:crypto";
import { lchown, mkdir, rm } from "node:fs/promises";
import path from "node:path";
import { assertProject } from "./auth.js";
import type { Ctx } from "./context.js";
import { badRequest, field, HttpError, readJson, sendJson } from "./http.js";
import { SANDBOX_USER } from "./image.js";
import type { HolderMount } from "./isolation.js";
import { copyTree, shiftOwners } from "./host-tree.js";
import { paginate, type SandboxRecord, type SessionRecord, sortBy } from "./registry.js";

export type MountMode = "read-write" | "snapshot";
export type Mounts = Record<string, { drive: string; mode: MountMode }>;

export interface DriveRecord {
  id: string;
  name: string;
  projectId: string;
  region: string;
  maxSizeBytes: number;
  createdAt: number;
  updatedAt: number;
  dir: string;
  /** The id range its files are owned in (the last sandbox that mounted it read-write); undefined: never mounted. */
  idBase?: number;
  attached?: { sessionId: string; sandboxName: string };
}

const DEFAULT_MAX_SIZE = 10 * 1024 * 1024 * 1024;
/** Where a drive may not be mounted: the sandbox's system directories and kernel views. */
const RESERVED = ["/proc", "/sys", "/dev", "/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/etc"];

const driveNotFound = (name: string) => new HttpError(404, "drive_not_found", `Drive ${name} was not found`);

/** Validates a `mounts` body (pure): absolute, normal, non-overlapping paths outside system directories. */
export function mountsOf(body: Record<string, unknown>): Mounts | undefined {
  const raw = body.mounts;
  if (raw === undefined || raw === null) return undefined;
  if (typeof raw !== "object" || Array.isArray(raw)) throw badRequest("`mounts` must map paths to drives");
  const out: Mounts = {};
  for (const [where, spec] of Object.entries(raw as Record<string, unknown>)) {
    if (!where.startsWith("/") || path.posix.normalize(where) !== where || where === "/" || where.endsWith("/"))
      throw badRequest(`mount path ${JSON.stringify(where)} must be an absolute, normalised path other than /`);
    if (/[\0-\x1f\x7f]/.test(where)) throw badRequest("a mount path must not contain control characters");
    if (RESERVED.some((r) => where === r || where.startsWith(`${r}/`)))
      throw badRequest(`drives cannot be mounted under ${where.split("/").slice(0, 2).join("/")}`);
    const s = (spec ?? {}) as Record<string, unknown>;
    const drive = field.string(s, "drive");
    if (!drive) throw badRequest(`mount ${where} needs a \`drive\``);
    const mode = s.mode ?? "read-write";
    if (mode !== "read-write" && mode !== "snapshot" && mode !== "read-only")
      throw badRequest(`mount ${where}: mode must be read-write or snapshot`);
    out[where] = { drive, mode: mode === "read-write" ? "read-write" : "snapshot" };
  }
  const paths = Object.keys(out);
  for (const a of paths)
    for (const b of paths) if (a !== b && b.startsWith(`${a}/`)) throw badRequest(`mount paths ${a} and ${b} overlap`);
  return out;
}

export class DriveStore {
  readonly drives = new Map<string, DriveRecord>();

  constructor(private readonly dataDir: string) {}

  payload(d: DriveRecord) {
    return {
      id: d.id,
      name: d.name,
      projectId: d.projectId,
      region: d.region,
      maxSizeBytes: d.maxSizeBytes,
      ...(d.attached ? { currentSessionId: d.attached.sessionId, currentSandboxName: d.attached.sandboxName } : {}),
      createdAt: d.createdAt,
      updatedAt: d.updatedAt,
    };
  }

  /** 404 for a mount naming a drive that does not exist (checked before anything is stored). */
  assertExist(mounts: Mounts | undefined): void {
    for (const { drive } of Object.values(mounts ?? {})) if (!this.drives.has(drive)) throw driveNotFound(drive);
  }

  /**
   * Before a session boots: attaches its read-write drives (409 when one is attached to another running session),
   * prepares private copies for snapshot mounts, and moves owners into the sandbox's id range.
   */
  async attach(
    sandbox: SandboxRecord,
    session: SessionRecord,
    running: (sessionId: string) => boolean,
  ): Promise<HolderMount[]> {
    const mounts = sandbox.mounts ?? {};
    const out: HolderMount[] = [];
    const owner = sandbox.idBase + SANDBOX_USER.uid;
    let i = 0;
    try {
      for (const [target, { drive: name, mode }] of Object.entries(mounts)) {
        const drive = this.drives.get(name);
        if (!drive) throw driveNotFound(name);
        if (mode === "read-write") {
          const holder = drive.attached;
          if (holder && holder.sessionId !== session.id && running(holder.sessionId))
            throw new HttpError(409, "drive_in_use", `Drive ${name} is attached to sandbox ${holder.sandboxName}`);
          drive.attached = { sessionId: session.id, sandboxName: sandbox.name };
          await this.adopt(drive.dir, drive.idBase, sandbox.idBase, owner);
          drive.idBase = sandbox.idBase;
          out.push({ source: path.relative(this.dataDir, drive.dir), target, readOnly: false });
        } else {
          const copy = path.join(sandbox.dir, "drive-snapshots", String(i++));
          await rm(copy, { recursive: true, force: true });
          await mkdir(path.dirname(copy), { recursive: true });
          await copyTree(drive.dir, copy);
          await this.adopt(copy, drive.idBase, sandbox.idBase, owner);
          out.push({ source: path.relative(this.dataDir, copy), target, readOnly: true });
        }
      }
    } catch (error) {
      this.detach(session.id);
      throw error;
    }
    return out;
  }

  /** A never-mounted drive's root becomes the default user's; a mounted one's files move to `to`'s range. */
  private async adopt(dir: string, from: number | undefined, to: number, owner: number): Promise<void> {
    if (from === undefined) await lchown(dir, owner, owner);
    else await shiftOwners(dir, from, to);
  }

  /** After a session ends: its read-write drives are free again. */
  detach(sessionId: string): void {
    for (const drive of this.drives.values()) if (drive.attached?.sessionId === sessionId) drive.attached = undefined;
  }

  /** GET /v2/sandboxes/drives[?namePrefix&sortBy&sortOrder&limit&cursor]. */
  async list(ctx: Ctx): Promise<void> {
    const q = ctx.url.searchParams;
    const prefix = q.get("namePrefix");
    const items = sortBy(
      [...this.drives.values()].filter((d) => !prefix || d.name.startsWith(prefix)),
      (d) => (q.get("sortBy") === "name" ? d.name : d.createdAt),
      q.get("sortOrder"),
    );
    const { page, pagination } = paginate(items, q);
    sendJson(ctx.res, 200, { drives: page.map((d) => this.payload(d)), pagination });
  }

  /** POST /v2/sandboxes/drives/{name}: the drive, created first if it does not exist. */
  async getOrCreate(ctx: Ctx): Promise<void> {
    const name = ctx.params[0] ?? "";
    const body = await readJson(ctx.req);
    assertProject(ctx.scope, field.string(body, "projectId") ?? ctx.scope.projectId);
    if (!/^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/.test(name)) throw badRequest(`Invalid drive name: ${name}`);
    let drive = this.drives.get(name);
    if (!drive) {
      const id = `drv_${randomBytes(12).toString("hex")}`;
      const dir = path.join(this.dataDir, "drives", id);
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
      this.drives.set(name, drive);
    }
    sendJson(ctx.res, 200, { drive: this.payload(drive) });
  }

  /** GET /v2/sandboxes/drives/{name}. */
  async get(ctx: Ctx): Promise<void> {
    const drive = this.drives.get(ctx.params[0] ?? "");
    if (!drive) throw driveNotFound(ctx.params[0] ?? "");
    sendJson(ctx.res, 200, { drive: this.payload(drive) });
  }

  /** DELETE /v2/sandboxes/drives/{name}: refused while attached; the data is gone for good. */
  async delete(ctx: Ctx, running: (sessionId: string) => boolean): Promise<void> {
    const name = ctx.params[0] ?? "";
    const drive = this.drives.get(name);
    if (!drive) throw driveNotFound(name);
    if (drive.attached && running(drive.attached.sessionId))
      throw new HttpError(409, "drive_in_use", `Drive ${name} is attached to sandbox ${drive.attached.sandboxName}`);
    this.drives.delete(name);
    await rm(drive.dir, { recursive: true, force: true });
    drive.updatedAt = Date.now();
    sendJson(ctx.res, 200, { drive: this.payload(drive) });
  }
}
