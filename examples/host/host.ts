// A reference host for sleep and wake, shaped like a Vercel Function (a Fetch API handler), in front of VM1 (the
// sandbox that runs the OpenClaw gateway with this plugin's `suspend` block):
//   POST /notify   the resident's signed notification → suspend the gateway → sleep VM1
//   POST /message  an incoming message → wake VM1 (fresh gateway process, fresh idle clock)
// Everything it needs comes from `openclaw-vercel-sandbox/host` (imported here from the source, so the repo's
// type-check runs before any build; in your project: `from "openclaw-vercel-sandbox/host"`). Secrets come from
// the host's own environment.
import {
  GatewayClient,
  MemoryNonceStore,
  type NonceStore,
  sleepVm,
  type VmConnection,
  verifyNotification,
  wakeVm,
} from "../../src/host/index.js";

export interface HostConfig {
  gatewayUrl: string;
  gatewayToken: string;
  notifySecret: string;
  connection: VmConnection;
  vmName: string;
  /** How the gateway is started in a woken VM1. */
  start: { cmd: string; args?: string[]; env?: Record<string, string> };
  /** Readiness of the woken gateway (e.g. GET /readyz on its port). */
  ready: () => Promise<boolean>;
  /** Shared across instances in production (e.g. Redis SET NX); in memory is enough for one instance. */
  nonces?: NonceStore;
  suspendDeadlineMs?: number;
  /** Keeps the function alive for work after the response (Vercel: `waitUntil` from @vercel/functions). */
  waitUntil?: (work: Promise<unknown>) => void;
  /** Called with the outcome of each sleep attempt (logs, tests). */
  onSlept?: (outcome: unknown) => void;
}

const json = (status: number, body: unknown) =>
  new Response(JSON.stringify(body), { status, headers: { "content-type": "application/json" } });

export function createHost(config: HostConfig) {
  const nonces = config.nonces ?? new MemoryNonceStore();
  const gateway = new GatewayClient({ baseUrl: config.gatewayUrl, token: config.gatewayToken, timeoutMs: 15_000 });
  let lifecycle: Promise<unknown> = Promise.resolve(); // one sleep or wake at a time per instance

  const sleptInstances = new Set<string>();

  async function sleep(instanceId: string): Promise<unknown> {
    if (sleptInstances.has(instanceId)) return { slept: false, why: "already asleep" };
    const result = await gateway.suspend({
      requestId: `sleep-${instanceId}`,
      deadlineMs: config.suspendDeadlineMs ?? 60_000,
    });
    if (result.status !== "ready") return { slept: false, gateway: result };
    const slept = await sleepVm({ connection: config.connection, name: config.vmName });
    sleptInstances.add(instanceId);
    return { slept: true, snapshotId: slept.snapshotId, kept: slept.kept };
  }

  // Acknowledged at once (the resident's request has a short timeout); the sleep runs after the response.
  async function onNotify(request: Request): Promise<Response> {
    const body = await request.text();
    const verified = await verifyNotification({ secret: config.notifySecret, headers: request.headers, body, nonces });
    if (!verified.ok) return json(401, { error: verified.reason });
    const { instanceId } = verified.notification;
    const work = serially(() => sleep(instanceId)).then(
      (outcome) => config.onSlept?.(outcome),
      (error: unknown) => config.onSlept?.({ slept: false, error: (error as Error).name }),
    );
    config.waitUntil?.(work);
    return json(202, { accepted: true });
  }

  async function onMessage(): Promise<Response> {
    const woke = await wakeVm({
      connection: config.connection,
      name: config.vmName,
      start: config.start,
      ready: () => config.ready(),
    });
    // A gateway that was not frozen with its VM (it runs elsewhere, or the stop failed) still holds our lease:
    // resume it, so admission reopens. A freshly started gateway has none.
    sleptInstances.clear();
    const status = await gateway.status();
    if (status.suspension.phase !== "running") await gateway.resume(status.suspension.suspensionId);
    return json(200, { woke: true, ms: woke.ms, instanceId: status.instanceId });
  }

  function serially<T>(run: () => Promise<T>): Promise<T> {
    const next = lifecycle.then(run, run);
    lifecycle = next.catch(() => undefined);
    return next;
  }

  return {
    async fetch(request: Request): Promise<Response> {
      const { pathname } = new URL(request.url);
      if (request.method !== "POST") return json(405, { error: "use POST" });
      try {
        if (pathname === "/notify") return await onNotify(request);
        if (pathname === "/message") return await serially(onMessage);
        return json(404, { error: "not found" });
      } catch (error) {
        return json(500, { error: (error as Error).name });
      }
    },
  };
}
