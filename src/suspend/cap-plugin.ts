// Wires the worker cap's gateway side into the plugin (always, whatever the `suspend` block says: a profile's
// `maxWorkers` is only known at placement): per-session activity from the same hooks and agent events as the
// idle clock, the two authenticated routes, and the Reclaimer the cap calls, which reaches those routes over
// loopback with the gateway's own credential (see loopback.ts).
import path from "node:path";
import { Value } from "@sinclair/typebox/value";
import { dispatchGatewayMethod } from "openclaw/plugin-sdk/gateway-method-runtime";
import type { OpenClawPluginApi } from "openclaw/plugin-sdk/plugin-entry";
import {
  type PlacementResult,
  PlacementResultSchema,
  type ReclaimResult,
  ReclaimResultSchema,
  WORKER_ROUTES,
  type WorkersResult,
  WorkersResultSchema,
} from "../protocol/index.js";
import type { Reclaimer } from "../provider/index.js";
import { CapService, createCapRoutes, type MakeRoom } from "./cap-routes.js";
import { GatewayLoopback, LoopbackError, type LoopbackTarget, readCertificate } from "./loopback.js";
import { SessionActivity } from "./sessions.js";

const DEFAULT_PORT = 18_789;

interface GatewayConfigView {
  port?: unknown;
  auth?: unknown;
  tls?: { enabled?: unknown; certPath?: unknown };
}

/**
 * Whether a profile of ours sets `maxWorkers` (profiles change only with a gateway restart, which re-registers):
 * only then are the routes, hooks and service registered.
 */
export function capConfigured(config: unknown, providerId: string): boolean {
  const profiles = (config as { cloudWorkers?: { profiles?: unknown } } | undefined)?.cloudWorkers?.profiles;
  if (!profiles || typeof profiles !== "object") return false;
  return Object.values(profiles as Record<string, { provider?: unknown; settings?: { maxWorkers?: unknown } }>).some(
    (p) => p?.provider === providerId && p.settings?.maxWorkers !== undefined,
  );
}

export function registerWorkerCapRoutes(api: OpenClawPluginApi, providerId: string, makeRoom?: MakeRoom): Reclaimer {
  const activity = new SessionActivity();
  api.on("message_received", (event) => activity.touch(event.sessionKey));
  api.on("model_call_started", (event) => activity.callStarted(event.sessionKey, event.callId));
  api.on("model_call_ended", (event) => activity.callEnded(event.sessionKey, event.callId));
  let port: number | undefined;
  api.on("gateway_start", (event) => {
    port = event.port;
  });

  let off: (() => void) | undefined;
  api.registerService({
    id: "vercel-sandbox-sessions",
    start() {
      off = api.runtime.events.onAgentEvent((event) => {
        if (event.stream !== "lifecycle") return;
        const phase = (event.data as { phase?: unknown }).phase;
        if (phase === "start") activity.runStarted(event.sessionKey, event.runId);
        else if (phase === "end" || phase === "error") activity.runEnded(event.sessionKey, event.runId);
      });
    },
    async stop() {
      off?.();
      off = undefined;
      await loopback.close();
    },
  });

  const service = new CapService(providerId, (key) => activity.state(key));
  const routes = createCapRoutes(
    service,
    (method, params) => dispatchGatewayMethod(method, params, { timeoutMs: routes.timeoutMs }),
    makeRoom,
  );
  for (const [name, routePath] of Object.entries(WORKER_ROUTES) as [keyof typeof WORKER_ROUTES, string][]) {
    api.registerHttpRoute({
      path: routePath,
      auth: "gateway",
      match: "exact",
      gatewayRuntimeScopeSurface: "trusted-operator",
      handler: routes[name],
    });
  }

  const target = async (): Promise<LoopbackTarget> => {
    const gateway = ((api.config as { gateway?: GatewayConfigView }).gateway ?? {}) as GatewayConfigView;
    const { resolveGatewayAuth } = await import("openclaw/plugin-sdk/gateway-runtime");
    const auth = resolveGatewayAuth({ authConfig: gateway.auth as never, env: process.env });
    const credential = auth.mode === "password" ? auth.password : auth.token;
    if (!credential)
      throw new LoopbackError(`gateway auth mode ${auth.mode} gives the plugin no credential to present`);
    const configuredPort = typeof gateway.port === "number" ? gateway.port : DEFAULT_PORT;
    let certPem: string | undefined;
    if (gateway.tls?.enabled === true) {
      const certPath =
        typeof gateway.tls.certPath === "string" && gateway.tls.certPath.trim()
          ? gateway.tls.certPath
          : path.join(api.runtime.state.resolveStateDir(process.env), "gateway", "tls", "gateway-cert.pem");
      certPem = await readCertificate(certPath);
    }
    return { port: port ?? configuredPort, credential, ...(certPem ? { certPem } : {}) };
  };
  const loopback = new GatewayLoopback(target);

  return {
    async workers() {
      const answer = await loopback.call<WorkersResult>("GET", WORKER_ROUTES.workers, undefined, 60_000);
      if (!Value.Check(WorkersResultSchema, answer)) throw new LoopbackError("unexpected workers answer");
      return answer.workers;
    },
    async placementOf(sessionKey) {
      const query = `${WORKER_ROUTES.placement}?session=${encodeURIComponent(sessionKey)}`;
      const answer = await loopback.call<PlacementResult>("GET", query, undefined, 60_000);
      if (!Value.Check(PlacementResultSchema, answer)) throw new LoopbackError("unexpected placement answer");
      return answer.placement ?? undefined;
    },
    async reclaimOne(among) {
      const answer = await loopback.call<ReclaimResult>("POST", WORKER_ROUTES.reclaim, { among }, routes.timeoutMs);
      if (!Value.Check(ReclaimResultSchema, answer)) throw new LoopbackError("unexpected reclaim answer");
      return answer;
    },
  };
}
