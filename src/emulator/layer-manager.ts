// The layer manager: a sandbox's layers and its snapshots' (layers.ts). It gives a sandbox a fresh upper layer over
// a snapshot's chain, shares a source's chain with a fork, freezes a stopped sandbox's upper layer into a snapshot
// (the one Vercel takes at a persistent sandbox's stop included), evicts and deletes snapshots and sweeps the layers
// nothing stands on; and it runs each sandbox's layer transitions (a boot, a snapshot, a fork's layers) one at a time
// (`exclusive`). The boot and stop path (lifecycle.ts) calls it.
import { existsSync } from "node:fs";
import { mkdir, readdir, rename, rm } from "node:fs/promises";
import path from "node:path";
import { mergeLayers } from "./host-tree.js";
import { prepareLayers, sandboxLayout } from "./isolation.js";
import { type LayerRef, layerBytes, MAX_LAYERS, sweepLayers } from "./layers.js";
import { newId, type Registry, type SandboxRecord, type SessionRecord, type SnapshotRecord } from "./registry.js";

const DEFAULT_SNAPSHOT_EXPIRATION = 30 * 24 * 3600 * 1000;

export class LayerManager {
  constructor(
    readonly registry: Registry,
    readonly dataDir: string,
  ) {}

  /** Gives a sandbox a fresh, empty upper layer over a snapshot's frozen chain (or the bare image), for the boot that follows: no copy. */
  async resetLayers(sandbox: SandboxRecord, snapshotId: string | undefined): Promise<void> {
    const layout = sandboxLayout(sandbox.dir);
    const snap = this.registry.liveSnapshot(snapshotId);
    sandbox.lowers = snap ? [...snap.layers] : [];
    if (snap) snap.lastUsedAt = Date.now();
    // The boot that follows makes the fresh layer dirs (prepareLayers).
    await Promise.all([layout.fs, layout.work, layout.layers].map((d) => rm(d, { recursive: true, force: true })));
    await this.sweep();
  }

  /**
   * A fork's layers when its persistent source has no live current snapshot (sandboxes.ts `forkSandbox`): never
   * stopped nor snapshotted, its base environment; its current snapshot deleted, its files as that snapshot left
   * them. Shared, never copied: the source goes on over its own upper layer, the fork over a fresh one. A stopped
   * source whose stop snapshot is not taken yet (a timeout's stop in flight) is snapshotted here first.
   */
  forkLayer(from: SandboxRecord, to: SandboxRecord): Promise<void> {
    return this.exclusive(from, async () => {
      const current = this.registry.sessions.get(from.currentSessionId);
      if (current?.stopping) await current.stopping;
      await rm(sandboxLayout(to.dir).fs, { recursive: true, force: true });
      await mkdir(to.dir, { recursive: true });
      if (current && this.owesStopSnapshot(from, current)) await this.snapshotAtStop(from, current);
      to.lowers = [...(from.lowers ?? [])];
    });
  }

  /** Whether the sandbox's stopped current session still owes the snapshot Vercel takes at a persistent stop. */
  owesStopSnapshot(sandbox: SandboxRecord, session: SessionRecord): boolean {
    return (
      sandbox.persistent &&
      sandbox.currentSessionId === session.id &&
      session.status === "stopped" &&
      session.snapshottedAt === undefined &&
      !sandbox.pendingRestore
    );
  }

  /**
   * The snapshot of a persistent sandbox's stop, as Vercel takes it: listed, counted by `keepLastSnapshots`, the
   * sandbox's `currentSnapshotId` (its next session and its forks start from it), with the sandbox's default
   * expiration. Its layer is the session's upper layer, moved (no copy); an empty upper layer adds none (the
   * snapshot stands on the sandbox's chain as it is).
   */
  async snapshotAtStop(sandbox: SandboxRecord, session: SessionRecord): Promise<SnapshotRecord> {
    const id = newId("snap");
    const dir = path.join(this.dataDir, "snapshots", id);
    const upper = path.join(sandboxLayout(sandbox.dir).fs, "upper");
    let layers: LayerRef[];
    if (existsSync(upper) && (await readdir(upper)).length > 0) {
      layers = await this.freeze(sandbox, dir);
    } else {
      await mkdir(dir, { recursive: true });
      layers = [...(sandbox.lowers ?? [])];
    }
    return this.record(sandbox, session, id, dir, layers, { atStop: true });
  }

  /**
   * Runs `change` once the sandbox's previous layer transition has ended. A resume's boot, a snapshot and a
   * fork's copy each move or remake the sandbox's layer dirs: two at once would mount two overlays on one
   * upper and work dir (the second mount empties the first's work dir, after which every copy-up in the first
   * fails with ENOENT), or boot on a layer a snapshot is still moving away.
   */
  exclusive<T>(sandbox: SandboxRecord, change: () => Promise<T>): Promise<T> {
    const run = (sandbox.transitions ?? Promise.resolve()).then(change);
    sandbox.transitions = run.catch(() => undefined);
    return run;
  }

  /** Removes the layers of gone snapshots that no sandbox and no live snapshot stands on (layers.ts). */
  async sweep(): Promise<void> {
    const sandboxes = [...this.registry.sandboxes.values()];
    const snaps = [...this.registry.snapshots.values()];
    const roots = [
      ...sandboxes.map((s) => s.lowers ?? []),
      ...snaps.filter((s) => this.registry.liveSnapshot(s.id)).map((s) => s.layers),
    ];
    const gone = new Map(
      snaps
        .filter((s) => !s.layersFreed && !this.registry.liveSnapshot(s.id))
        .map((s) => [path.relative(this.dataDir, s.dir), s]),
    );
    const unrecorded = this.registry.unrecordedLayers;
    for (const home of await sweepLayers(this.dataDir, roots, [...gone.keys(), ...unrecorded])) {
      const snap = gone.get(home);
      if (snap) snap.layersFreed = true;
      else unrecorded.delete(home);
    }
  }

  /** Lists a snapshot of the session's files (the chain `layers`), makes it current when persistent, evicts. */
  async record(
    sandbox: SandboxRecord,
    session: SessionRecord,
    id: string,
    dir: string,
    layers: LayerRef[],
    { expiration, atStop }: { expiration?: number; atStop?: boolean },
  ): Promise<SnapshotRecord> {
    const now = Date.now();
    const ttl = expiration ?? sandbox.snapshotExpiration ?? DEFAULT_SNAPSHOT_EXPIRATION;
    const snap: SnapshotRecord = {
      id,
      sourceSessionId: session.id,
      sandboxName: sandbox.name,
      region: sandbox.region,
      status: "created",
      sizeBytes: layers.reduce((sum, l) => sum + l.bytes, 0),
      createdAt: now,
      updatedAt: now,
      expiresAt: ttl === 0 ? undefined : now + ttl,
      parentId: session.sourceSnapshotId,
      ...(atStop ? { atStop } : {}),
      dir,
      idBase: sandbox.idBase,
      layers,
    };
    this.registry.snapshots.set(id, snap);
    session.snapshottedAt = now;
    if (sandbox.persistent) sandbox.currentSnapshotId = id;
    await this.evict(sandbox);
    await this.sweep();
    return snap;
  }

  /**
   * Moves the stopped sandbox's upper layer to `dir` (no copy) as the top of its chain, which it goes on over
   * under a fresh upper layer; answers that chain (flattened past MAX_LAYERS).
   */
  async freeze(sandbox: SandboxRecord, dir: string): Promise<LayerRef[]> {
    const layout = sandboxLayout(sandbox.dir);
    await mkdir(dir, { recursive: true });
    await rename(layout.fs, path.join(dir, "fs"));
    const own = path.join(dir, "fs", "upper");
    const top: LayerRef = {
      dir: path.relative(this.dataDir, own),
      idBase: sandbox.idBase,
      bytes: await layerBytes(own),
    };
    let layers = [top, ...(sandbox.lowers ?? [])];
    if (layers.length > MAX_LAYERS) layers = await this.flatten(layers, dir);
    sandbox.lowers = layers;
    await Promise.all([layout.work, layout.layers].map((d) => rm(d, { recursive: true, force: true })));
    await prepareLayers(sandbox.dir, sandbox.idBase);
    return layers;
  }

  /**
   * One merged layer in place of a chain grown past MAX_LAYERS (a copy, once per MAX_LAYERS snapshots), as
   * the chain's top layer (in `dir`). Should the merge fail, the longer chain stays: overlayfs takes it still.
   */
  private async flatten(layers: LayerRef[], dir: string): Promise<LayerRef[]> {
    const top = layers[0]!;
    const own = path.join(this.dataDir, top.dir);
    const merged = path.join(dir, "merged");
    try {
      const dirs = layers.map((l) => ({ dir: path.join(this.dataDir, l.dir), idBase: l.idBase }));
      await mergeLayers(merged, top.idBase, dirs);
    } catch {
      await rm(merged, { recursive: true, force: true });
      return layers;
    }
    await rm(own, { recursive: true, force: true });
    await rename(merged, own);
    return [{ ...top, bytes: await layerBytes(own) }];
  }

  private async evict(sandbox: SandboxRecord): Promise<void> {
    const keep = sandbox.keepLastSnapshots as { count?: number; deleteEvicted?: boolean } | undefined;
    if (!keep?.count || keep.deleteEvicted === false) return;
    const own = [...this.registry.snapshots.values()]
      .filter((s) => s.sandboxName === sandbox.name && s.status === "created")
      .sort((a, b) => b.createdAt - a.createdAt);
    for (const old of own.slice(keep.count)) await this.deleteSnapshot(old);
  }

  async deleteSnapshot(snap: SnapshotRecord): Promise<void> {
    snap.status = "deleted";
    snap.updatedAt = Date.now();
    await this.sweep();
  }
}
