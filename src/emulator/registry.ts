// In-memory state of the emulated service: sandboxes (durable identities), sessions (one boot
// each, addressed by id), commands and snapshots, plus the id and cursor rules the SDK's
// paginators rely on (`pagination.next` is an opaque cursor, `null` on the last page).
import { randomInt } from "node:crypto";
import type { SessionEgress } from "./egress.js";
import type { CommandProcess } from "./executor.js";
import { freeIdBase, ID_SLOTS } from "./id-ranges.js";
import type { Holder } from "./isolation.js";
import type { LayerRef } from "./layers.js";

export type SessionStatus = "pending" | "running" | "stopping" | "stopped" | "failed" | "aborted" | "snapshotting";

export interface SandboxRecord {
  name: string;
  projectId: string;
  persistent: boolean;
  region: string;
  /** Ordered; never contains `region` or a duplicate (regions.ts). */
  failoverRegions?: string[];
  runtime?: string;
  image?: string;
  vcpus: number;
  timeout: number;
  ports: number[];
  env: Record<string, string>;
  tags?: Record<string, string>;
  /** Request-shape policy; converted to the legacy shape on the way out. */
  networkPolicy: Record<string, unknown>;
  snapshotExpiration?: number;
  keepLastSnapshots?: Record<string, unknown>;
  createdAt: number;
  updatedAt: number;
  statusUpdatedAt: number;
  currentSessionId: string;
  currentSnapshotId?: string;
  /** The snapshot a non-persistent sandbox's sessions boot from (undefined: clean image). */
  baseSnapshotId?: string;
  /** Set by PATCH currentSnapshotId: the next session restores that snapshot first. */
  pendingRestore?: string;
  /** Host directory holding this sandbox's filesystem layers. */
  dir: string;
  /** Host id of the sandbox's id 0: its own id range, kept for its life (id-ranges.ts). */
  idBase: number;
  /** Frozen layers (top first) under its own upper layer: its last snapshot's, or its source's (layers.ts). */
  lowers?: LayerRef[];
  /** In-flight boot, so concurrent resumes share one session. */
  booting?: Promise<SessionRecord>;
  /** The last of its layer transitions (a resume's boot, a snapshot, a fork's copy), each run after the one before (layer-manager.ts `exclusive`). */
  transitions?: Promise<unknown>;
  /** Drives mounted into its sessions, by path (drives.ts); applied at the next boot. */
  mounts?: Record<string, { drive: string; mode: "read-write" | "snapshot" }>;
}

export interface SessionRecord {
  id: string;
  sandboxName: string;
  status: SessionStatus;
  region: string;
  runtime?: string;
  vcpus: number;
  memory: number;
  timeout: number;
  networkPolicy: Record<string, unknown>;
  sourceSnapshotId?: string;
  requestedAt: number;
  createdAt: number;
  startedAt?: number;
  updatedAt: number;
  requestedStopAt?: number;
  stoppedAt?: number;
  snapshottedAt?: number;
  holder?: Holder;
  /** The egress proxy of a custom policy, started by the first command that needs it. */
  egress?: Promise<SessionEgress>;
  timer?: NodeJS.Timeout;
  /** In-flight stop, so resume can wait for it. */
  stopping?: Promise<void>;
  commands: Map<string, CommandProcess>;
}

export interface SnapshotRecord {
  id: string;
  sourceSessionId: string;
  sandboxName: string;
  region: string;
  status: "created" | "deleted" | "failed";
  sizeBytes: number;
  createdAt: number;
  updatedAt: number;
  expiresAt?: number;
  lastUsedAt?: number;
  parentId?: string;
  /** Taken by a persistent sandbox's stop (lifecycle.ts `stopKeeping`), not asked for. */
  atStop?: boolean;
  /** `snapshots/<id>`: holds its own frozen layer, kept after a delete while a chain stands on it (layers.ts). */
  dir: string;
  /** The id range of its own layer's owners (its sandbox's). */
  idBase: number;
  /** Its chain of frozen layers, its own first (layers.ts). */
  layers: LayerRef[];
  /** Set once its gone snapshot's own layer has been removed (no chain stood on it any more). */
  layersFreed?: boolean;
}

export { newId } from "./ids.js";

/** One command a session started, as the API received it (tests prove what ran and what did not). */
export interface CommandLogEntry {
  sandboxName: string;
  sessionId: string;
  command: string;
  args: string[];
  cwd: string;
  sudo: boolean;
  at: number;
}

export class Registry {
  readonly sandboxes = new Map<string, SandboxRecord>();
  /** Every command started, oldest first; bounded so a long-lived emulator does not grow without end. */
  readonly commandLog: CommandLogEntry[] = [];
  readonly sessions = new Map<string, SessionRecord>();
  readonly snapshots = new Map<string, SnapshotRecord>();
  /**
   * Homes of frozen layers that no snapshot record holds, until swept: a restored chain's whose own snapshot was
   * not restored (persisted-snapshots.ts).
   */
  readonly unrecordedLayers = new Set<string>();
  /** Per sandbox name, the tail of the chain of create/delete/fork calls holding that name. */
  private readonly nameLocks = new Map<string, Promise<void>>();

  /**
   * Runs `fn` after every earlier holder of `name` has finished, so a create never interleaves
   * with a delete of the same name (whose late `rm` would otherwise wipe the new sandbox). The
   * lock is taken synchronously, in call order.
   */
  async withName<T>(name: string, fn: () => Promise<T>): Promise<T> {
    const previous = this.nameLocks.get(name) ?? Promise.resolve();
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    const tail = previous.then(() => held);
    this.nameLocks.set(name, tail);
    try {
      await previous;
      return await fn();
    } finally {
      release();
      if (this.nameLocks.get(name) === tail) this.nameLocks.delete(name);
    }
  }

  /** Where this emulator starts looking for a free id range (id-ranges.ts). */
  private readonly idSlotStart = randomInt(ID_SLOTS);

  /** An id range no registered sandbox holds; it is the new sandbox's once it is registered. */
  freeIdBase(): number {
    return freeIdBase(
      [...this.sandboxes.values()].map((s) => s.idBase),
      this.idSlotStart,
    );
  }

  /** A snapshot that still exists: deleted and expired ones count as gone (they still list, see snapshots.ts). */
  liveSnapshot(id: string | undefined): SnapshotRecord | undefined {
    if (!id) return undefined;
    const snap = this.snapshots.get(id);
    if (snap?.status !== "created") return undefined;
    if (snap.expiresAt !== undefined && snap.expiresAt <= Date.now()) return undefined;
    return snap;
  }
}

/** One page of `items` from an offset cursor; `next` is null on the last page. */
export function paginate<T>(
  items: T[],
  query: URLSearchParams,
): { page: T[]; pagination: { count: number; next: string | null } } {
  const limit = Math.min(Math.max(Number(query.get("limit") ?? 20) || 20, 1), 200);
  const offset = Math.max(Number(query.get("cursor") ?? 0) || 0, 0);
  const page = items.slice(offset, offset + limit);
  const next = offset + limit < items.length ? String(offset + limit) : null;
  return { page, pagination: { count: page.length, next } };
}

/** Sorts by a numeric/string key, ascending or descending (`desc` by default, newest first). */
export function sortBy<T>(items: T[], key: (item: T) => number | string, order: string | null): T[] {
  const sign = order === "asc" ? 1 : -1;
  return [...items].sort((a, b) => {
    const ka = key(a);
    const kb = key(b);
    return ka < kb ? -sign : ka > kb ? sign : 0;
  });
}
