// A reference host for sleep and wake, shaped like a Vercel Function (a Fetch API handler), in front of VM1 (the
// sandbox that runs the OpenClaw gateway with this plugin's `suspend` block):
//   POST /notify   the resident's signed notification → suspend the gateway → sleep VM1; or a signed wake
//                  snapshot (`kind: "wake"`) → kept durably, then acknowledged → the wake timer is re-armed
//   POST /message  an incoming message (Bearer messageSecret) → wake VM1 if it sleeps → hand the message over
// Scheduled wake (wake-timer.ts): one timer for the next wake the kept snapshot asks for, minus the host's own
// lead (`wakeAheadMs`, how long a wake takes); when it fires and VM1 sleeps, VM1 is woken by the same path a
// message uses, so the job runs in the woken gateway. The timer lives as long as this host's process (a plain
// server); a Vercel Function instance does not, so there a cron or queue calls the same wake at `wakePlan().atMs`.
// Everything it needs comes from the host library (src/host, published as `openclaw-vercel-sandbox/host`).
// Secrets come from the host's own environment. Bodies are bounded before they are read (guards.ts). The main
// job runs it in front of its VM1; examples/host/server.ts runs it as a plain server.
import {
  GatewayClient,
  type HostStore,
  HostStoreUnavailableError,
  type KeptWake,
  MemoryHostStore,
  type NonceStore,
  NonceStoreFullError,
  notificationKind,
  type StatusResult,
  sleepVm,
  type VmConnection,
  verifyNotification,
  verifyWakeNotification,
  vmStatus,
  type WakeOptions,
  type WakePlan,
  WakeSchedule,
  type WakeStore,
  WakeStoreWriteError,
  wakeVm,
} from "../host/index.js";
import { BodyTooLargeError, bearerMatches, DEFAULT_MAX_BODY_BYTES, readBounded } from "./guards.js";
import { type WakeEvent, WakeTimer } from "./wake-timer.js";

export interface HostConfig {
  gatewayUrl: string;
  gatewayToken: string;
  notifySecret: string;
  /**
   * The secret a message must carry (`Authorization: Bearer <secret>`). Without one `/message` is open to anyone
   * who reaches the host: serve() then binds to loopback only, and a deployed function must set it.
   */
  messageSecret?: string;
  connection: VmConnection;
  vmName: string;
  /** How the gateway is started in a woken VM1. */
  start: { cmd: string; args?: string[]; env?: Record<string, string> };
  /**
   * VM1's network policy, set at every wake before the gateway starts: where credentials VM1 must not hold (the
   * model's key) are added by the firewall as request rules (wakeVm's `networkPolicy`).
   */
  networkPolicy?: WakeOptions["networkPolicy"];
  /** Readiness of the woken gateway (e.g. GET /readyz on its port). */
  ready: () => Promise<boolean>;
  /** Hands a message to the running gateway; without it the host answers once VM1 is awake. */
  deliver?: (message: Buffer, awake: Awake) => Promise<Response>;
  /**
   * The state host instances share (nonces, the wake schedule; RedisHostStore for many instances). Default: a
   * MemoryHostStore over `nonces` and `wakeStore` when given (one instance). Give either it or those two.
   */
  store?: HostStore;
  /** Shared across instances in production (e.g. Redis SET NX); in memory is enough for one instance. */
  nonces?: NonceStore;
  suspendDeadlineMs?: number;
  /** Bound on a request body; bigger ones are answered 413 (default 64 KiB). */
  maxBodyBytes?: number;
  /** Keeps the function alive for work after the response (Vercel: `waitUntil` from @vercel/functions). */
  waitUntil?: (work: Promise<unknown>) => void;
  /** Called with the outcome of each sleep attempt (logs, tests). */
  onSlept?: (outcome: unknown) => void;
  /** Where the host's own log lines go (default: stderr). Never given a secret. */
  log?: (line: string) => void;
  /**
   * Where accepted wake snapshots are kept (default: in memory). A host that must remember its schedule across
   * restarts passes a FileWakeStore (or a store of its own whose replace is atomic and durable).
   */
  wakeStore?: WakeStore;
  /**
   * How long before the gateway's wake time (its job's due time minus `suspend.wakeLead`) to start waking VM1: how
   * long a wake takes (default 60 s). Keep it under the gateway's `idleAfter`: a woken gateway holds sleep only
   * within its own `wakeLead` of the job, so an earlier wake could idle back to sleep first (it is woken again).
   */
  wakeAheadMs?: number;
  /** The furthest ahead the wake timer may be set (default and most: 2^31-1 ms); a later wake is reported. */
  wakeMaxAheadMs?: number;
  /** VM1's session deadline as this host knows it: a job due after it is reported, not scheduled. */
  wakeDeadlineAtMs?: () => number | undefined;
  /** Called with each scheduled-wake event (armed, unschedulable, woke, failed); each is logged too. */
  onWake?: (event: WakeEvent) => void;
}

/** Whether this message had to wake VM1, and how long that took. */
export interface Awake {
  woke: boolean;
  ms: number;
  instanceId?: string;
}

const json = (status: number, body: unknown, headers: Record<string, string> = {}) =>
  new Response(JSON.stringify(body), { status, headers: { "content-type": "application/json", ...headers } });

export function createHost(config: HostConfig) {
  if (config.messageSecret === "") throw new Error("messageSecret is empty: set a real secret, or leave it unset");
  if (config.store && (config.nonces || config.wakeStore)) {
    throw new Error("give the host a store, or nonces and wakeStore, not both");
  }
  const store =
    config.store ??
    new MemoryHostStore({
      ...(config.nonces ? { nonces: config.nonces } : {}),
      ...(config.wakeStore ? { wake: config.wakeStore } : {}),
    });
  const nonces = store.nonces;
  const gateway = new GatewayClient({ baseUrl: config.gatewayUrl, token: config.gatewayToken, timeoutMs: 15_000 });
  const maxBodyBytes = config.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES;
  const log = config.log ?? ((line: string) => process.stderr.write(`${line}\n`));
  let lifecycle: Promise<unknown> = Promise.resolve(); // one sleep or wake at a time per instance
  let waking: Promise<Awake> | undefined; // messages that arrive while VM1 wakes share that wake

  const sleptInstances = new Set<string>();
  const schedule = new WakeSchedule(store.wake);
  const timer = new WakeTimer({
    schedule,
    aheadMs: config.wakeAheadMs ?? 60_000,
    ...(config.wakeMaxAheadMs !== undefined ? { maxAheadMs: config.wakeMaxAheadMs } : {}),
    ...(config.wakeDeadlineAtMs ? { deadlineAtMs: config.wakeDeadlineAtMs } : {}),
    wake: () => awake(),
    report: (event) => {
      log(`reference host: scheduled wake ${describeWake(event)}`);
      config.onWake?.(event);
    },
  });
  const rearm = () =>
    timer.arm().catch((error: unknown) => {
      log(
        `reference host: the wake timer could not be armed (${(error as Error).name}); it is re-armed on the next snapshot or sleep`,
      );
      return undefined;
    });
  // A restarted host with a durable store picks its schedule up again.
  void rearm();

  async function sleep(instanceId: string): Promise<unknown> {
    if (sleptInstances.has(instanceId)) return { slept: false, why: "already asleep" };
    const result = await gateway.suspend({
      requestId: `sleep-${instanceId}`,
      deadlineMs: config.suspendDeadlineMs ?? 60_000,
    });
    if (result.status !== "ready") return { slept: false, gateway: result };
    // The gateway pushes its wake list when it changes, but a push still retrying (or lost) when VM1 stops would
    // lose a job: take the list from its status, which the suspension leaves readable, before VM1 stops.
    await recoverWakeList(await gateway.status());
    const slept = await sleepVm({ connection: config.connection, name: config.vmName });
    sleptInstances.add(instanceId);
    // A wake time that passed while VM1 was still up (or is near) now needs a real wake.
    void rearm();
    return { slept: true, snapshotId: slept.snapshotId, kept: slept.kept };
  }

  /** A signed wake snapshot: kept durably before it is acknowledged (the plugin retries anything but 2xx). */
  async function onWakeSnapshot(request: Request, body: string): Promise<Response> {
    const verified = await verifyWakeNotification({
      secret: config.notifySecret,
      headers: request.headers,
      body,
      nonces,
    });
    if (!verified.ok) return json(401, { error: verified.reason });
    let outcome: "accepted" | "stale";
    try {
      outcome = await schedule.accept(verified.notification);
    } catch (error) {
      if (!(error instanceof WakeStoreWriteError || error instanceof HostStoreUnavailableError)) throw error;
      log(`reference host: ${error.message}; not acknowledged (the gateway sends it again)`);
      return json(503, { error: error.name });
    }
    if (outcome === "stale") return json(409, { error: "stale", revision: verified.notification.snapshot.revision });
    await rearm();
    return json(200, { accepted: true, revision: verified.notification.snapshot.revision });
  }

  // Acknowledged at once (the resident's request has a short timeout); the sleep runs after the response.
  async function onNotify(request: Request): Promise<Response> {
    const body = (await readBounded(request.body, request.headers.get("content-length"), maxBodyBytes)).toString();
    let verified: Awaited<ReturnType<typeof verifyNotification>>;
    try {
      if (notificationKind(body) === "wake") return await onWakeSnapshot(request, body);
      verified = await verifyNotification({ secret: config.notifySecret, headers: request.headers, body, nonces });
    } catch (error) {
      // Fail closed: the resident retries 5xx and notifies again while sleep stays due.
      if (error instanceof HostStoreUnavailableError) {
        log(`reference host: ${error.message}`);
        return json(503, { error: error.name }, { "retry-after": "1" });
      }
      if (!(error instanceof NonceStoreFullError)) throw error;
      log(`reference host: ${error.message}`);
      return json(503, { error: error.name }, { "retry-after": String(Math.ceil(error.retryAfterMs / 1000)) });
    }
    if (!verified.ok) return json(401, { error: verified.reason });
    const { instanceId } = verified.notification;
    const work = serially(() => sleep(instanceId)).then(
      (outcome) => config.onSlept?.(outcome),
      (error: unknown) => config.onSlept?.({ slept: false, error: (error as Error).name }),
    );
    config.waitUntil?.(work);
    return json(202, { accepted: true });
  }

  /** Wakes VM1 unless it runs (checked after any sleep in progress); a running VM1 is left as it is. */
  async function wakeIfAsleep(): Promise<Awake> {
    if ((await vmStatus(config.connection, config.vmName)) === "running") return { woke: false, ms: 0 };
    const woke = await wakeVm({
      connection: config.connection,
      name: config.vmName,
      start: config.start,
      ready: () => config.ready(),
      ...(config.networkPolicy ? { networkPolicy: config.networkPolicy } : {}),
    });
    // A gateway that was not frozen with its VM (it runs elsewhere, or the stop failed) still holds our lease:
    // resume it, so admission reopens. A freshly started gateway has none.
    sleptInstances.clear();
    const status = await gateway.status();
    if (status.suspension.phase !== "running") await gateway.resume(status.suspension.suspensionId);
    // The woken gateway's wake list, in case a notification was missed.
    await recoverWakeList(status);
    return { woke: true, ms: woke.ms, instanceId: status.instanceId };
  }

  /** Keeps the wake list a gateway's status answers, unless the host holds a newer one (a stale one is not kept). */
  async function recoverWakeList(status: StatusResult): Promise<void> {
    if (status.wake && status.wakeLeadMs !== undefined) {
      if ((await schedule.recover(status.instanceId, status.wake, status.wakeLeadMs)) === "accepted") void rearm();
    }
  }

  function awake(): Promise<Awake> {
    waking ??= serially(wakeIfAsleep).finally(() => {
      waking = undefined;
    });
    return waking;
  }

  async function onMessage(request: Request): Promise<Response> {
    if (
      config.messageSecret !== undefined &&
      !bearerMatches(request.headers.get("authorization"), config.messageSecret)
    ) {
      return json(401, { error: "unauthorized" }, { "www-authenticate": "Bearer" });
    }
    const message = await readBounded(request.body, request.headers.get("content-length"), maxBodyBytes);
    const state = await awake();
    return config.deliver ? config.deliver(message, state) : json(200, state);
  }

  function serially<T>(run: () => Promise<T>): Promise<T> {
    const next = lifecycle.then(run, run);
    lifecycle = next.catch(() => undefined);
    return next;
  }

  return {
    authenticatesMessages: config.messageSecret !== undefined,
    /** The next scheduled wake as this host plans it now (or why it cannot). */
    wakePlan: (): Promise<WakePlan> => timer.arm(),
    /** The wake snapshot this host keeps (every job the gateway asked to be awake for), if any. */
    keptWake: (): Promise<KeptWake | undefined> => schedule.latest(),
    /** Clears the wake timer (call it when the host shuts down). */
    stop: () => timer.stop(),
    async fetch(request: Request): Promise<Response> {
      const { pathname } = new URL(request.url);
      if (request.method !== "POST") return json(405, { error: "use POST" });
      try {
        if (pathname === "/notify") return await onNotify(request);
        if (pathname === "/message") return await onMessage(request);
        return json(404, { error: "not found" });
      } catch (error) {
        if (error instanceof BodyTooLargeError) return json(413, { error: "body too large", limitBytes: maxBodyBytes });
        return json(500, { error: (error as Error).name });
      }
    },
  };
}

function describeWake(event: WakeEvent): string {
  const job = `for job ${event.jobId} due ${new Date(event.runAtMs).toISOString()}`;
  switch (event.kind) {
    case "armed":
      return `${job}: timer set for ${new Date(event.atMs).toISOString()}`;
    case "unschedulable":
      return `${job}: CANNOT be scheduled (${event.reason === "too-far" ? "too far ahead for this host's timer" : "after VM1's session deadline"}); the job will be missed unless VM1 is awake then`;
    case "woke":
      return `${job}: ${event.woke ? `VM1 woken in ${event.ms} ms` : "VM1 was already awake"}`;
    case "failed":
      return `${job}: the wake failed (${event.error}); retrying in ${event.retryInMs} ms`;
  }
}
