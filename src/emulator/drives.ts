// Drives (SDK 3.3+): persistent volumes of the project that outlive sandboxes and mount into them. A drive
// is a directory under `<dataDir>/drives`; `mounts` on create or update ({"/path": {drive, mode}}) apply to
// the sandbox's next session: the holder (isolation.ts) binds a `read-write` drive itself at the path, and a
// `snapshot` (read-only) mount gets a private copy of the drive as it is at boot, mounted read-only. A
// read-write drive is held by one session at a time (`currentSessionId`), from the first moment of its boot
// until it is stopped (`claim`); another boot that wants it is refused with 409 `drive_in_use`, as is deleting
// it while held. A snapshot mount of a drive another session holds is refused with 409
// `drive_attached_read_write`: that session could change the tree while the host copies it. Files keep their owners
// as the sandbox sees them: the drive's files move to the id range of the sandbox that mounts it
// (host-tree.ts). Drive contents are not part of a sandbox's snapshots. `maxSizeBytes` is recorded,
// not enforced (the data dir's filesystem is the limit).
// The endpoints that list, create and delete drives are drive-routes.ts; this file is the drives themselves.
import { lchown, mkdir, rm } from "node:fs/promises";
import path from "node:path";
import { copyTree, shiftOwners } from "./host-tree.js";
import { badRequest, field, HttpError } from "./http.js";
import { SANDBOX_USER } from "./image.js";
import type { HolderMount } from "./isolation.js";
import type { SandboxRecord, SessionRecord } from "./registry.js";

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
  /** Snapshot mounts being copied from it now: no session may claim it read-write meanwhile. */
  copying?: number;
}

/** Where a drive may not be mounted: the sandbox's system directories and kernel views. */
const RESERVED = ["/proc", "/sys", "/dev", "/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/etc"];

export const driveNotFound = (name: string) => new HttpError(404, "drive_not_found", `Drive ${name} was not found`);

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
  /** Per booting session, the drives its snapshot mounts are being copied from (`claim` to `attach`'s end). */
  private readonly claims = new Map<string, DriveRecord[]>();

  /**
   * `live` says whether a session still holds what it claimed: every session that is not stopped (booting,
   * running, stopping, snapshotting), since any of them may have or get the drive mounted.
   */
  constructor(
    readonly dataDir: string,
    readonly live: (sessionId: string) => boolean,
  ) {}

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
   * Claims the session's drives as its boot begins, before anything is awaited (so two boots at once cannot
   * both pass the check): each read-write drive becomes the session's, refused with 409 `drive_in_use` while
   * another session holds it or a snapshot mount is being copied from it; a snapshot mount is refused with 409
   * `drive_attached_read_write` while another session holds its drive (it could change the tree mid-copy) and
   * counts as a copy in progress until `attach` has made it. All or nothing: a refusal claims none. Answers the
   * mounts claimed, which `attach` mounts (a patch of the sandbox's mounts meanwhile is for its next session).
   */
  claim(sandbox: SandboxRecord, session: SessionRecord): Mounts {
    const mounts = { ...(sandbox.mounts ?? {}) };
    const wanted = Object.values(mounts).map(({ drive: name, mode }) => {
      const drive = this.drives.get(name);
      if (!drive) throw driveNotFound(name);
      const holder = drive.attached && drive.attached.sessionId !== session.id ? drive.attached : undefined;
      const held = holder !== undefined && this.live(holder.sessionId);
      if (mode === "read-write" && held)
        throw new HttpError(409, "drive_in_use", `Drive ${name} is attached to sandbox ${holder.sandboxName}`);
      if (mode === "read-write" && drive.copying)
        throw new HttpError(409, "drive_in_use", `Drive ${name} is being copied for a snapshot mount`);
      if (mode === "snapshot" && held)
        throw new HttpError(
          409,
          "drive_attached_read_write",
          `Drive ${name} is attached read-write to sandbox ${holder.sandboxName}: a snapshot mount needs it detached`,
        );
      return { drive, mode };
    });
    for (const { drive, mode } of wanted) {
      if (mode === "read-write") drive.attached = { sessionId: session.id, sandboxName: sandbox.name };
      else drive.copying = (drive.copying ?? 0) + 1;
    }
    this.claims.set(
      session.id,
      wanted.filter((w) => w.mode === "snapshot").map((w) => w.drive),
    );
    return mounts;
  }

  /**
   * After `claim`, before the session's holder starts: moves its read-write drives' owners into the sandbox's id
   * range and makes private copies for its snapshot mounts (both by file descriptor, host-tree.ts).
   */
  async attach(sandbox: SandboxRecord, session: SessionRecord, mounts: Mounts): Promise<HolderMount[]> {
    const out: HolderMount[] = [];
    const owner = sandbox.idBase + SANDBOX_USER.uid;
    let i = 0;
    try {
      for (const [target, { drive: name, mode }] of Object.entries(mounts)) {
        const drive = this.drives.get(name);
        if (!drive) throw driveNotFound(name);
        if (mode === "read-write") {
          await this.adopt(drive.dir, drive.idBase, sandbox.idBase, owner);
          drive.idBase = sandbox.idBase;
          out.push({ source: path.relative(this.dataDir, drive.dir), target, readOnly: false });
        } else {
          const copy = path.join(sandbox.dir, "drive-snapshots", String(i++));
          await rm(copy, { recursive: true, force: true });
          await mkdir(path.dirname(copy), { recursive: true });
          const from = drive.idBase;
          await copyTree(drive.dir, copy, from === undefined ? undefined : { from, to: sandbox.idBase });
          if (from === undefined) await lchown(copy, owner, owner);
          out.push({ source: path.relative(this.dataDir, copy), target, readOnly: true });
        }
      }
    } finally {
      this.copied(session.id);
    }
    return out;
  }

  /** The session's snapshot copies are made (or will not be): their drives may be claimed read-write again. */
  private copied(sessionId: string): void {
    for (const drive of this.claims.get(sessionId) ?? []) drive.copying = Math.max((drive.copying ?? 1) - 1, 0);
    this.claims.delete(sessionId);
  }

  /** A never-mounted drive's root becomes the default user's; a mounted one's files move to `to`'s range. */
  private async adopt(dir: string, from: number | undefined, to: number, owner: number): Promise<void> {
    if (from === undefined) await lchown(dir, owner, owner);
    else await shiftOwners(dir, from, to);
  }

  /** After a session ends (or its boot failed): its drives are free again. */
  detach(sessionId: string): void {
    this.copied(sessionId);
    for (const drive of this.drives.values()) if (drive.attached?.sessionId === sessionId) drive.attached = undefined;
  }
}
