// A host for sleep and wake, built only on the published `openclaw-vercel-sandbox/host` entry, shaped like a
// Vercel Function (a Fetch API handler) in front of VM1, the sandbox that runs the OpenClaw gateway with this
// plugin's `suspend` block:
//   POST /notify   a signed sleep notification → suspend the gateway → sleep VM1 (snapshot; newest two kept);
//                  a signed wake snapshot (`kind: "wake"`) → kept, then acknowledged → the wake timer is re-armed
//   POST /message  an incoming message (Bearer messageSecret) → wake VM1 if it sleeps → answer once it runs
// Scheduled wake: one timer for the soonest job the kept snapshot lists, set to its due time minus the gateway's
// lead minus this host's own (`wakeAheadMs`, how long a wake takes). The timer lives as long as this process; as a
// Vercel Function, have a Vercel Cron job call the wake at `wakePlan().atMs` instead.
import { createHash, timingSafeEqual } from "node:crypto";
import {
  GatewayClient,
  MemoryNonceStore,
  MemoryWakeStore,
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
  wakeKey,
  wakeVm,
} from "openclaw-vercel-sandbox/host";

export interface HostConfig {
  gatewayUrl: string;
  gatewayToken: string;
  notifySecret: string;
  /** The secret `/message` must carry; without it `/message` is open, and serve() binds to loopback only. */
  messageSecret?: string;
  connection: VmConnection;
  vmName: string;
  /** How the gateway is started in a woken VM1. */
  start: WakeOptions["start"];
  /** Readiness of the woken gateway (e.g. GET /readyz on its port). */
  ready: () => Promise<boolean>;
  /** VM1's network policy, set at every wake before the gateway starts (e.g. a firewall rule adding a model key). */
  networkPolicy?: WakeOptions["networkPolicy"];
  /** Where accepted wake snapshots are kept (default: in memory); a FileWakeStore survives a restart. */
  wakeStore?: WakeStore;
  /** How long before the gateway's wake time to start waking VM1 (default 60 s); keep it under `idleAfter`. */
  wakeAheadMs?: number;
  /** Where log lines go (default: stderr). Never given a secret. */
  log?: (line: string) => void;
}

/** The largest request body the host reads; a notification is well under 1 KiB, a message a few KiB. */
export const MAX_BODY_BYTES = 64 * 1024;
/** Node's longest timer. */
const MAX_TIMER_MS = 2 ** 31 - 1;

/** A request body over MAX_BODY_BYTES: answered 413 without reading further. */
export class BodyTooLargeError extends Error {
  constructor() {
    super(`request body exceeds ${MAX_BODY_BYTES} bytes`);
    this.name = "BodyTooLargeError";
  }
}

/** Reads at most MAX_BODY_BYTES, refusing on the declared length before a byte is read, and again while it streams. */
export async function readBounded(chunks: AsyncIterable<Uint8Array> | null, length: string | null | undefined) {
  if (length && Number(length) > MAX_BODY_BYTES) throw new BodyTooLargeError();
  const parts: Buffer[] = [];
  let total = 0;
  for await (const chunk of chunks ?? []) {
    total += chunk.byteLength;
    if (total > MAX_BODY_BYTES) throw new BodyTooLargeError();
    parts.push(Buffer.from(chunk));
  }
  return Buffer.concat(parts);
}

/** `Authorization: Bearer <secret>`, compared in constant time (digests first, so lengths do not show). */
function bearerMatches(authorization: string | null, secret: string): boolean {
  const digest = (value: string) => createHash("sha256").update(value).digest();
  return timingSafeEqual(digest(authorization ?? ""), digest(`Bearer ${secret}`));
}

const json = (status: number, body: unknown) =>
  new Response(JSON.stringify(body), { status, headers: { "content-type": "application/json" } });

export function createHost(config: HostConfig) {
  if (config.messageSecret === "") throw new Error("messageSecret is empty: set a real secret, or leave it unset");
  const log = config.log ?? ((line: string) => process.stderr.write(`${line}\n`));
  const gateway = new GatewayClient({ baseUrl: config.gatewayUrl, token: config.gatewayToken, timeoutMs: 15_000 });
  const nonces = new MemoryNonceStore(); // several instances share one store instead (e.g. Redis SET NX)
  const schedule = new WakeSchedule(config.wakeStore ?? new MemoryWakeStore());
  const served = new Set<string>(); // wakes this host already woke VM1 for
  let lifecycle: Promise<unknown> = Promise.resolve(); // one sleep or wake at a time
  let waking: Promise<{ woke: boolean; ms: number }> | undefined; // messages during a wake share it
  let timer: NodeJS.Timeout | undefined;

  function serially<T>(run: () => Promise<T>): Promise<T> {
    const next = lifecycle.then(run, run);
    lifecycle = next.catch(() => undefined);
    return next;
  }

  /** Sets the one timer for the next wake the kept snapshot asks for (or reports why it cannot). */
  async function arm(): Promise<WakePlan> {
    const now = Date.now();
    const plan = await schedule.plan(now, { aheadMs: config.wakeAheadMs ?? 60_000, maxAheadMs: MAX_TIMER_MS, served });
    clearTimeout(timer);
    if (plan.kind === "unschedulable") log(`host: job ${plan.jobId} CANNOT be scheduled (${plan.reason})`);
    if (plan.kind !== "wake") return plan;
    // Not re-armed after it fires: VM1 is awake then, and the next sleep arms the timer again.
    timer = setTimeout(() => {
      awake().then(
        () => served.add(wakeKey(plan)),
        (error: unknown) => {
          log(`host: the scheduled wake failed (${(error as Error).name}); retrying in 30 s`);
          timer = setTimeout(rearm, 30_000).unref();
        },
      );
    }, plan.atMs - now).unref(); // the server keeps the process alive; a pending wake alone must not
    log(`host: wake for job ${plan.jobId} set for ${new Date(plan.atMs).toISOString()}`);
    return plan;
  }
  const rearm = () => arm().catch((error: unknown) => log(`host: timer not armed (${(error as Error).name})`));
  void rearm(); // a restarted host with a durable store picks its schedule up again

  /** Keeps the wake list a gateway's status carries (a host that missed a notification recovers it here). */
  async function recoverWakeList(status: StatusResult) {
    if (status.wake && status.wakeLeadMs !== undefined) {
      await schedule.recover(status.instanceId, status.wake, status.wakeLeadMs);
    }
  }

  async function sleep(instanceId: string) {
    const result = await gateway.suspend({ requestId: `sleep-${instanceId}`, deadlineMs: 60_000 });
    if (result.status !== "ready") return log(`host: the gateway answered ${result.status}; VM1 stays up`);
    await recoverWakeList(await gateway.status()); // before VM1 stops: a push still retrying would be lost
    const slept = await sleepVm({ connection: config.connection, name: config.vmName });
    log(`host: VM1 asleep (checkpoint ${slept.snapshotId})`);
    await rearm();
  }

  async function wakeIfAsleep() {
    if ((await vmStatus(config.connection, config.vmName)) === "running") return { woke: false, ms: 0 };
    const woke = await wakeVm({
      connection: config.connection,
      name: config.vmName,
      start: config.start,
      ready: () => config.ready(),
      ...(config.networkPolicy ? { networkPolicy: config.networkPolicy } : {}),
    });
    // A gateway that was not stopped with its VM still holds the suspension: resume it so admission reopens.
    const status = await gateway.status();
    if (status.suspension.phase !== "running") await gateway.resume(status.suspension.suspensionId);
    await recoverWakeList(status);
    return { woke: true, ms: woke.ms };
  }

  function awake() {
    waking ??= serially(wakeIfAsleep).finally(() => {
      waking = undefined;
    });
    return waking;
  }

  async function onNotify(request: Request, body: string): Promise<Response> {
    try {
      if (notificationKind(body) === "wake") {
        const verified = await verifyWakeNotification({
          secret: config.notifySecret,
          headers: request.headers,
          body,
          nonces,
        });
        if (!verified.ok) return json(401, { error: verified.reason });
        const { revision } = verified.notification.snapshot;
        // Acknowledged only once kept: the gateway sends it again on anything but 2xx.
        if ((await schedule.accept(verified.notification)) === "stale") return json(409, { error: "stale", revision });
        await rearm();
        return json(200, { accepted: true, revision });
      }
      const verified = await verifyNotification({
        secret: config.notifySecret,
        headers: request.headers,
        body,
        nonces,
      });
      if (!verified.ok) return json(401, { error: verified.reason });
      // Answered at once; the sleep runs after the response (on Vercel, pass it to `waitUntil`).
      void serially(() => sleep(verified.notification.instanceId)).catch((error: unknown) =>
        log(`host: the sleep failed (${(error as Error).name})`),
      );
      return json(202, { accepted: true });
    } catch (error) {
      // Fail closed: the gateway retries a 5xx.
      if (error instanceof NonceStoreFullError || error instanceof WakeStoreWriteError) {
        return json(503, { error: error.name });
      }
      throw error;
    }
  }

  async function onMessage(request: Request): Promise<Response> {
    if (
      config.messageSecret !== undefined &&
      !bearerMatches(request.headers.get("authorization"), config.messageSecret)
    ) {
      return json(401, { error: "unauthorized" });
    }
    // Hand the message to the gateway here (e.g. its OpenAI-compatible endpoint); this host answers once VM1 runs.
    return json(200, await awake());
  }

  return {
    /** True when `/message` requires the shared secret. */
    authenticatesMessages: config.messageSecret !== undefined,
    /** The next scheduled wake as this host plans it now (or why it cannot). */
    wakePlan: arm,
    /** Clears the wake timer (call it when the host shuts down). */
    stop: () => clearTimeout(timer),
    async fetch(request: Request): Promise<Response> {
      if (request.method !== "POST") return json(405, { error: "use POST" });
      try {
        const body = (await readBounded(request.body, request.headers.get("content-length"))).toString();
        const { pathname } = new URL(request.url);
        if (pathname === "/notify") return await onNotify(request, body);
        if (pathname === "/message") return await onMessage(request);
        return json(404, { error: "not found" });
      } catch (error) {
        if (error instanceof BodyTooLargeError)
          return json(413, { error: "body too large", limitBytes: MAX_BODY_BYTES });
        return json(500, { error: (error as Error).name });
      }
    },
  };
}
