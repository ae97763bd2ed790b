// Sandbox and session lifecycle: boot (fresh, from a snapshot, or resuming the sandbox's own
// layer), stop (kill the namespace; also on session timeout, as Vercel does; a persistent sandbox is snapshotted
// then, as Vercel does), snapshot (stop, then freeze the sandbox's upper layer, layers.ts), a fork's layers, and
// delete. The SDK's auto-resume relies
// on stopped sessions answering 410 and on `get?resume=true` booting a new session, which starts here.
import type { ChildProcess } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdir, readdir, rename, rm } from "node:fs/promises";
import path from "node:path";
import { SandboxCgroups } from "./cgroups.js";
import type { DriveStore } from "./drives.js";
import { closeSessionEgress, networkModeOf, sessionEgress } from "./egress.js";
import { InterceptCertificates } from "./egress-certs.js";
import { closeDirectRoutes } from "./egress-routes.js";
import { HolderFactory, type PreparedHolder } from "./holder-zygote.js";
import { mergeLayers } from "./host-tree.js";
import { HttpError } from "./http.js";
import { ensureSandboxImage, type SandboxImage } from "./image.js";
import { HOLDER_READY_TIMEOUT_MS, prepareLayers, sandboxLayout, startHolder, stopHolder } from "./isolation.js";
import { type LayerRef, layerBytes, MAX_LAYERS, stackPlan, sweepLayers } from "./layers.js";
import { MEMORY_PER_VCPU } from "./payloads.js";
import { newId, type Registry, type SandboxRecord, type SessionRecord, type SnapshotRecord } from "./registry.js";
import { closeRouteAccess, syncRouteAccess } from "./route-access.js";
import { closeConnector } from "./route-connector.js";
import { RouteServer } from "./route-server.js";

const DEFAULT_SNAPSHOT_EXPIRATION = 30 * 24 * 3600 * 1000;
/** Outer processes kept made ahead of the next boots (`Lifecycle.spares`). */
const SPARES = 2;

export class Lifecycle {
  constructor(
    readonly registry: Registry,
    readonly dataDir: string,
    private readonly track: (c: ChildProcess) => void,
    /** Host directory of the runtime's `node`, mounted into every session (see isolation.ts). */
    private readonly nodeBinDir?: string,
  ) {
    this.routes = new RouteServer(registry, dataDir, track);
    this.holders = new HolderFactory(track);
    this.interceptCertificates = new InterceptCertificates(dataDir, () => this.routes.ca());
  }

  /** Leaves for the hosts whose requests the egress reads to apply request rules (egress-intercept.ts). */
  private readonly interceptCertificates: InterceptCertificates;
  /** Extra CA certificates the egress trusts when it re-originates TLS for such a host (the emulator's `egressTrust`). */
  egressTrust: string[] = [];
  /** The project's drives, attached to a session at boot and released at its end (drives.ts). */
  drives?: DriveStore;

  /** Each session's CPU, memory and process limits (cgroups.ts); says once, here, where there are none. */
  private readonly cgroups = new SandboxCgroups();
  /** Per id range, the image (built on first boot of a sandbox of that range). */
  private readonly images = new Map<number, Promise<SandboxImage>>();
  /** Serves exposed ports at their `*.vercel.run` names (route-server.ts). */
  readonly routes: RouteServer;
  /** Forks every session's holder (holder-zygote.ts). */
  private readonly holders: HolderFactory;
  /**
   * Outer processes made ahead of the next boots, each in groups of its own (`key`), with its holder forked and
   * waiting: a boot takes the oldest, so neither the cgroup migration (an RCU grace period, several ms) nor a fork
   * is on a create's or a resume's path. Refilled to `SPARES` by a boot that found none, else when a session stops
   * (made after a boot, they would compete with that sandbox's first command, which nearly always follows it). Two,
   * so a resume right after a stop takes one made earlier rather than wait for the one the stop began.
   */
  private readonly spares: { key: string; prepared: PreparedHolder }[] = [];
  private closing = false;

  /** Makes the next boots' outer processes, up to `SPARES` (none while the emulator is closing). */
  private refillSpares(): void {
    while (!this.closing && this.spares.length < SPARES) {
      const key = newId("spare");
      let procs: string[];
      try {
        procs = this.cgroups.create(key, 1);
      } catch {
        return; // The next boot makes its groups itself, and says why if it cannot.
      }
      this.spares.push({ key, prepared: this.holders.prepare(procs) });
    }
  }

  /** The oldest spare outer process still there for a boot of `sessionId`, with its limits; else none. */
  private takeSpare(sessionId: string, vcpus: number): { prepared?: PreparedHolder; limits: string[] } {
    for (let spare = this.spares.shift(); spare; spare = this.spares.shift()) {
      if (spare.prepared.start.isGone()) {
        void this.discard(spare);
        continue;
      }
      try {
        return { prepared: spare.prepared, limits: this.cgroups.adopt(spare.key, sessionId, vcpus) };
      } catch {
        void this.discard(spare);
        break;
      }
    }
    return { limits: this.cgroups.create(sessionId, vcpus) };
  }

  private async discard(spare: { key: string; prepared: PreparedHolder }): Promise<void> {
    await stopHolder({ pid: 0, start: spare.prepared.start });
    await this.cgroups.remove(spare.key);
  }

  /** The image of a range, built on first boot; a failed build is retried by the next boot. */
  private sandboxImage(idBase: number): Promise<SandboxImage> {
    const built = this.images.get(idBase);
    if (built) return built;
    const building = this.routes.ca().then(({ ca }) => ensureSandboxImage(this.dataDir, idBase, this.nodeBinDir, ca));
    this.images.set(idBase, building);
    building.catch(() => {
      if (this.images.get(idBase) === building) this.images.delete(idBase);
    });
    return building;
  }

  /** The session's egress proxy, which sends allowed route names to the route server instead of DNS. */
  egressOf(session: SessionRecord) {
    return sessionEgress(
      session,
      this.track,
      (host) => this.routes.portFor(host),
      { certificates: this.interceptCertificates, trust: this.egressTrust },
      session.holder?.listener,
    );
  }

  /** Route names resolve and connect from inside the session (route-access.ts). */
  routeAccess(session: SessionRecord): Promise<void> {
    return syncRouteAccess(session, this.registry, this.routes, this.track);
  }

  sandboxDir(name: string): string {
    return path.join(this.dataDir, "sandboxes", encodeURIComponent(name));
  }

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

  /**
   * A stop that keeps the sandbox: the API's, its timeout's, its holder's end. Vercel snapshots a persistent
   * sandbox at such a stop; so does the emulator (`snapshotAtStop`), and answers that snapshot (undefined when the
   * sandbox is not persistent, the session was already stopped or snapshotted, or a later transition decided).
   */
  async stopKeeping(session: SessionRecord): Promise<SnapshotRecord | undefined> {
    await this.stop(session);
    const sandbox = this.registry.sandboxes.get(session.sandboxName);
    if (!sandbox?.persistent || sandbox.currentSessionId !== session.id) return undefined;
    return this.exclusive(sandbox, async () => {
      // Resumed, snapshotted, restored or deleted meanwhile: that transition decided the layers.
      if (this.registry.sandboxes.get(sandbox.name) !== sandbox) return undefined;
      if (!this.owesStopSnapshot(sandbox, session)) return undefined;
      return this.snapshotAtStop(sandbox, session);
    });
  }

  /** Whether the sandbox's stopped current session still owes the snapshot Vercel takes at a persistent stop. */
  private owesStopSnapshot(sandbox: SandboxRecord, session: SessionRecord): boolean {
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
  private async snapshotAtStop(sandbox: SandboxRecord, session: SessionRecord): Promise<SnapshotRecord> {
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
  private exclusive<T>(sandbox: SandboxRecord, change: () => Promise<T>): Promise<T> {
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

  /**
   * A new sandbox's first boot, on a fresh layer over `fromSnapshot` (or the bare image) or over the chain that
   * `forkOf` gives a fork (`forkLayer`). The sandbox is listed from the start, so a resume (a command run on it) may come
   * meanwhile: it joins this boot instead of mounting a second overlay on the same layer dirs.
   */
  start(sandbox: SandboxRecord, fromSnapshot: string | undefined, forkOf?: SandboxRecord): Promise<SessionRecord> {
    return this.exclusive(sandbox, () =>
      this.joinable(sandbox, async () => {
        if (forkOf) await this.forkLayer(forkOf, sandbox);
        else await this.resetLayers(sandbox, fromSnapshot);
        return this.boot(sandbox, fromSnapshot);
      }),
    );
  }

  /** Runs a boot as the sandbox's `booting`, which a resume arriving meanwhile joins. */
  private async joinable(sandbox: SandboxRecord, boot: () => Promise<SessionRecord>): Promise<SessionRecord> {
    sandbox.booting = boot();
    try {
      return await sandbox.booting;
    } finally {
      sandbox.booting = undefined;
    }
  }

  /** Boots a new running session for the sandbox and makes it current (inside `exclusive`: `start`, `resume`). */
  private async boot(sandbox: SandboxRecord, sourceSnapshotId?: string): Promise<SessionRecord> {
    const now = Date.now();
    const session: SessionRecord = {
      id: newId("sbx"),
      sandboxName: sandbox.name,
      status: "pending",
      region: sandbox.region,
      runtime: sandbox.runtime,
      vcpus: sandbox.vcpus,
      memory: sandbox.vcpus * MEMORY_PER_VCPU,
      timeout: sandbox.timeout,
      networkPolicy: sandbox.networkPolicy,
      sourceSnapshotId,
      requestedAt: now,
      createdAt: now,
      updatedAt: now,
      commands: new Map(),
    };
    this.registry.sessions.set(session.id, session);
    sandbox.currentSessionId = session.id;
    let tookSpare = false;
    try {
      // Before any await: a boot that wants a drive another session holds (booting included) is refused here.
      const claimed = this.drives?.claim(sandbox, session) ?? {};
      const image = await this.sandboxImage(sandbox.idBase);
      const mounts = (await this.drives?.attach(sandbox, session, claimed)) ?? [];
      const layout = sandboxLayout(sandbox.dir);
      const stack = stackPlan(this.dataDir, sandbox.lowers ?? [], sandbox.idBase, layout.layers);
      await prepareLayers(sandbox.dir, sandbox.idBase, stack);
      const { prepared, limits } = this.takeSpare(session.id, session.vcpus);
      tookSpare = prepared !== undefined;
      session.holder = await startHolder(
        this.holders,
        sandbox.dir,
        this.dataDir,
        image,
        HOLDER_READY_TIMEOUT_MS,
        limits,
        mounts,
        stack,
        networkModeOf(session.networkPolicy) === "proxied",
        prepared,
      );
    } catch (error) {
      this.refillSpares();
      this.drives?.detach(session.id);
      await this.cgroups.remove(session.id);
      session.status = "failed";
      session.updatedAt = Date.now();
      if (error instanceof HttpError) throw error;
      throw new HttpError(422, "sandbox_boot_failed", `Could not start the sandbox: ${(error as Error).message}`);
    }
    session.status = "running";
    session.startedAt = Date.now();
    session.updatedAt = session.startedAt;
    sandbox.statusUpdatedAt = session.startedAt;
    // A boot that found no spare makes them; otherwise they are made when a session stops (`stop`).
    if (!tookSpare) this.refillSpares();
    this.armTimeout(session);
    // The holder bound the egress proxy's listener (a session of another policy gets one from a helper on first use).
    if (session.holder.listener) this.egressOf(session).catch(() => undefined);
    // Best effort here: the next command makes the routes resolvable again, and says why if it cannot.
    await this.routeAccess(session).catch(() => undefined);
    // A holder that dies on its own (e.g. killed from outside) still ends the session.
    session.holder.exited.then(() => {
      if (session.status === "running") void this.stopKeeping(session);
    });
    return session;
  }

  /** After every session stopped (the emulator's close): the spare outer processes and the cgroup parent go. */
  async close(): Promise<void> {
    this.closing = true;
    await Promise.all(this.spares.splice(0).map((spare) => this.discard(spare)));
    return this.cgroups.close();
  }

  /** Resumes a sandbox: the running session if any, else a new one from its own layer. */
  async resume(sandbox: SandboxRecord): Promise<{ session: SessionRecord; resumed: boolean }> {
    if (sandbox.booting) return { session: await sandbox.booting, resumed: true };
    return this.exclusive(sandbox, () => this.resumeNow(sandbox));
  }

  /** `resume` once no other layer transition of the sandbox runs: what it finds then decides. */
  private async resumeNow(sandbox: SandboxRecord): Promise<{ session: SessionRecord; resumed: boolean }> {
    const current = this.registry.sessions.get(sandbox.currentSessionId);
    if (current?.stopping) await current.stopping;
    if (current?.status === "running") return { session: current, resumed: false };
    this.assertRestorable(sandbox);
    const session = await this.joinable(sandbox, async () => {
      let source: string | undefined;
      if (sandbox.pendingRestore) {
        source = sandbox.pendingRestore;
        await this.resetLayers(sandbox, source);
        sandbox.pendingRestore = undefined;
      } else if (!sandbox.persistent) {
        source = sandbox.baseSnapshotId;
        await this.resetLayers(sandbox, source);
      } else {
        source = sandbox.currentSnapshotId;
      }
      return this.boot(sandbox, source);
    });
    return { session, resumed: true };
  }

  /** 410 `snapshot_not_found` when a stopped sandbox's restore point is gone (getOrCreate recreates it). */
  assertRestorable(sandbox: SandboxRecord): void {
    const current = this.registry.sessions.get(sandbox.currentSessionId);
    if (current?.status === "running" || current?.stopping) return;
    const needed = sandbox.pendingRestore ?? sandbox.currentSnapshotId;
    if (needed && !this.registry.liveSnapshot(needed)) {
      throw new HttpError(
        410,
        "snapshot_not_found",
        `The snapshot ${needed} this sandbox restores from no longer exists`,
      );
    }
  }

  armTimeout(session: SessionRecord): void {
    clearTimeout(session.timer);
    const deadline = (session.startedAt ?? Date.now()) + session.timeout;
    session.timer = setTimeout(() => void this.stopKeeping(session), Math.max(deadline - Date.now(), 0));
    session.timer.unref();
  }

  /** Ends every process of the session; idempotent. */
  async stop(session: SessionRecord, status: "stopping" | "snapshotting" = "stopping"): Promise<void> {
    if (session.stopping) return session.stopping;
    if (session.status !== "running" && session.status !== "pending") return;
    clearTimeout(session.timer);
    session.status = status;
    session.requestedStopAt = Date.now();
    session.stopping = (async () => {
      for (const command of session.commands.values()) if (command.exitCode === null) command.interrupted = true;
      if (session.holder) await stopHolder(session.holder);
      // The proxy's listening socket keeps the namespace alive: close it with the session.
      await closeSessionEgress(session);
      // So does the direct link's descriptor of it; its host end and filter entries go with it.
      await closeDirectRoutes(session);
      await closeRouteAccess(session);
      closeConnector(session);
      await Promise.all([...session.commands.values()].map((c) => c.done));
      await this.cgroups.remove(session.id);
      this.drives?.detach(session.id);
      session.holder = undefined;
      session.status = "stopped";
      session.stoppedAt = Date.now();
      session.updatedAt = session.stoppedAt;
      const sandbox = this.registry.sandboxes.get(session.sandboxName);
      if (sandbox) sandbox.statusUpdatedAt = session.stoppedAt;
      // The next boots' spares are made once the stop is answered (`spares`).
      setImmediate(() => this.refillSpares());
    })();
    try {
      await session.stopping;
    } finally {
      session.stopping = undefined;
    }
  }

  /**
   * Stops the session (as Vercel does) and freezes the sandbox's upper layer into a new snapshot by moving
   * it (no copy); the sandbox stands on the snapshot's chain under a fresh upper layer from then on.
   */
  snapshot(sandbox: SandboxRecord, session: SessionRecord, expiration?: number): Promise<SnapshotRecord> {
    return this.exclusive(sandbox, () => this.snapshotNow(sandbox, session, expiration));
  }

  private async snapshotNow(
    sandbox: SandboxRecord,
    session: SessionRecord,
    expiration?: number,
  ): Promise<SnapshotRecord> {
    // Checked again here: a snapshot of the same session that ran first has stopped it meanwhile.
    if (session.status !== "running" || sandbox.currentSessionId !== session.id) {
      throw new HttpError(410, "sandbox_stopped", `Session ${session.id} is ${session.status}`);
    }
    await this.stop(session, "snapshotting");
    const id = newId("snap");
    const dir = path.join(this.dataDir, "snapshots", id);
    return this.record(sandbox, session, id, dir, await this.freeze(sandbox, dir), { expiration });
  }

  /** Lists a snapshot of the session's files (the chain `layers`), makes it current when persistent, evicts. */
  private async record(
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
  private async freeze(sandbox: SandboxRecord, dir: string): Promise<LayerRef[]> {
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

  async deleteSandbox(sandbox: SandboxRecord, deleteOrphanSnapshots: boolean): Promise<void> {
    const current = this.registry.sessions.get(sandbox.currentSessionId);
    if (current) await this.stop(current);
    // A create of the same name may already hold the slot (Registry.withName): never remove its record.
    if (this.registry.sandboxes.get(sandbox.name) === sandbox) this.registry.sandboxes.delete(sandbox.name);
    await rm(sandbox.dir, { recursive: true, force: true });
    await this.sweep();
    if (!deleteOrphanSnapshots) return;
    const used = new Set([...this.registry.sandboxes.values()].flatMap((s) => [s.currentSnapshotId, s.baseSnapshotId]));
    for (const snap of this.registry.snapshots.values()) {
      if (snap.sandboxName === sandbox.name && snap.status === "created" && !used.has(snap.id)) {
        await this.deleteSnapshot(snap);
      }
    }
  }
}
