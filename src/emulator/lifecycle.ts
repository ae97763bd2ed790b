// The boot and stop path of sandboxes and sessions: boot (fresh, from a snapshot, or resuming the sandbox's own
// layer), stop (kill the namespace; also on session timeout, as Vercel does; a persistent sandbox is snapshotted
// then, as Vercel does), snapshot (stop, then freeze the sandbox's upper layer), and delete. The SDK's auto-resume
// relies on stopped sessions answering 410 and on `get?resume=true` booting a new session, which starts here. A
// boot takes its outer process from the spare pool (spare-pool.ts); the layers, the snapshots and the one-at-a-time
// order of a sandbox's transitions are the layer manager's (layer-manager.ts).
import type { ChildProcess } from "node:child_process";
import { rm } from "node:fs/promises";
import path from "node:path";
import { SandboxCgroups } from "./cgroups.js";
import type { DriveStore } from "./drives.js";
import { closeSessionEgress, networkModeOf, sessionEgress } from "./egress.js";
import { InterceptCertificates } from "./egress-certs.js";
import { closeDirectRoutes } from "./egress-routes.js";
import { HolderFactory } from "./holder-zygote.js";
import { HttpError } from "./http.js";
import { ensureSandboxImage, type SandboxImage } from "./image.js";
import { HOLDER_READY_TIMEOUT_MS, prepareLayers, sandboxLayout, startHolder, stopHolder } from "./isolation.js";
import { LayerManager } from "./layer-manager.js";
import { stackPlan } from "./layers.js";
import { MEMORY_PER_VCPU } from "./payloads.js";
import { newId, type Registry, type SandboxRecord, type SessionRecord, type SnapshotRecord } from "./registry.js";
import { closeRouteAccess, syncRouteAccess } from "./route-access.js";
import { closeConnector } from "./route-connector.js";
import { RouteServer } from "./route-server.js";
import { SparePool } from "./spare-pool.js";

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
    this.spares = new SparePool(this.cgroups, this.holders);
    this.layers = new LayerManager(registry, dataDir);
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
  /** The next boots' outer processes, made ahead (spare-pool.ts). */
  private readonly spares: SparePool;
  /** Layers, snapshots and the one-at-a-time order of each sandbox's transitions (layer-manager.ts). */
  private readonly layers: LayerManager;

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

  /**
   * A stop that keeps the sandbox: the API's, its timeout's, its holder's end. Vercel snapshots a persistent
   * sandbox at such a stop; so does the emulator (`snapshotAtStop`), and answers that snapshot (undefined when the
   * sandbox is not persistent, the session was already stopped or snapshotted, or a later transition decided).
   */
  async stopKeeping(session: SessionRecord): Promise<SnapshotRecord | undefined> {
    await this.stop(session);
    const sandbox = this.registry.sandboxes.get(session.sandboxName);
    if (!sandbox?.persistent || sandbox.currentSessionId !== session.id) return undefined;
    return this.layers.exclusive(sandbox, async () => {
      // Resumed, snapshotted, restored or deleted meanwhile: that transition decided the layers.
      if (this.registry.sandboxes.get(sandbox.name) !== sandbox) return undefined;
      if (!this.layers.owesStopSnapshot(sandbox, session)) return undefined;
      return this.layers.snapshotAtStop(sandbox, session);
    });
  }

  /**
   * A new sandbox's first boot, on a fresh layer over `fromSnapshot` (or the bare image) or over the chain that
   * `forkOf` gives a fork (`forkLayer`). The sandbox is listed from the start, so a resume (a command run on it) may come
   * meanwhile: it joins this boot instead of mounting a second overlay on the same layer dirs.
   */
  start(sandbox: SandboxRecord, fromSnapshot: string | undefined, forkOf?: SandboxRecord): Promise<SessionRecord> {
    return this.layers.exclusive(sandbox, () =>
      this.joinable(sandbox, async () => {
        if (forkOf) await this.layers.forkLayer(forkOf, sandbox);
        else await this.layers.resetLayers(sandbox, fromSnapshot);
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
      const { prepared, limits } = this.spares.take(session.id, session.vcpus);
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
      this.spares.refill();
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
    if (!tookSpare) this.spares.refill();
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
    await this.spares.close();
    return this.cgroups.close();
  }

  /** Resumes a sandbox: the running session if any, else a new one from its own layer. */
  async resume(sandbox: SandboxRecord): Promise<{ session: SessionRecord; resumed: boolean }> {
    if (sandbox.booting) return { session: await sandbox.booting, resumed: true };
    return this.layers.exclusive(sandbox, () => this.resumeNow(sandbox));
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
        await this.layers.resetLayers(sandbox, source);
        sandbox.pendingRestore = undefined;
      } else if (!sandbox.persistent) {
        source = sandbox.baseSnapshotId;
        await this.layers.resetLayers(sandbox, source);
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
      setImmediate(() => this.spares.refill());
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
    return this.layers.exclusive(sandbox, () => this.snapshotNow(sandbox, session, expiration));
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
    return this.layers.record(sandbox, session, id, dir, await this.layers.freeze(sandbox, dir), { expiration });
  }

  /** A snapshot deleted (the API's, or evicted): its layers go once nothing stands on them (layer-manager.ts). */
  deleteSnapshot(snap: SnapshotRecord): Promise<void> {
    return this.layers.deleteSnapshot(snap);
  }

  async deleteSandbox(sandbox: SandboxRecord, deleteOrphanSnapshots: boolean): Promise<void> {
    const current = this.registry.sessions.get(sandbox.currentSessionId);
    if (current) await this.stop(current);
    // A create of the same name may already hold the slot (Registry.withName): never remove its record.
    if (this.registry.sandboxes.get(sandbox.name) === sandbox) this.registry.sandboxes.delete(sandbox.name);
    await rm(sandbox.dir, { recursive: true, force: true });
    await this.layers.sweep();
    if (!deleteOrphanSnapshots) return;
    const used = new Set([...this.registry.sandboxes.values()].flatMap((s) => [s.currentSnapshotId, s.baseSnapshotId]));
    for (const snap of this.registry.snapshots.values()) {
      if (snap.sandboxName === sandbox.name && snap.status === "created" && !used.has(snap.id)) {
        await this.layers.deleteSnapshot(snap);
      }
    }
  }
}
