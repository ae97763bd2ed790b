// Wires sleep and wake into the plugin: activity hooks feed the idle clock, a failed turn fences it (and new
// inbound messages are then answered with a refusal instead of a turn), the resident timer runs as a service,
// and the three routes dispatch the gateway's suspension handshake. Called from the entry only when the plugin
// config has a `suspend` block.

import { randomUUID } from "node:crypto";
import { dispatchGatewayMethod } from "openclaw/plugin-sdk/gateway-method-runtime";
import type { OpenClawPluginApi } from "openclaw/plugin-sdk/plugin-entry";
import { ROUTES } from "../protocol/index.js";
import { type ClockSnapshot, IdleClock } from "./clock.js";
import { type SleepPolicy, sessionDeadline } from "./decide.js";
import { notifyHost } from "./notifier.js";
import { Resident } from "./resident.js";
import { createRoutes } from "./routes.js";
import { resolveSuspendSettings, type SuspendConfigInput } from "./settings.js";
import { Suspender } from "./suspender.js";
import { WakeProjector } from "./wake-projection.js";

export const FENCED_REPLY = "This assistant is restarting after a failure; please send your message again shortly.";

/** What the rest of the plugin may read of sleep and wake: the idle clock and the policy it is judged by. */
export interface SuspendView {
  idle(): { clock: ClockSnapshot; policy: SleepPolicy };
  /** Worker provisions keep the gateway busy (the provider reports them). */
  provisionStarted(leaseId: string): void;
  provisionEnded(leaseId: string): void;
}

export function registerSuspend(api: OpenClawPluginApi, input: SuspendConfigInput, providerId: string): SuspendView {
  const settings = resolveSuspendSettings(input);
  const clock = new IdleClock();
  const instanceId = randomUUID();
  const deadlineAtMs = sessionDeadline(clock.snapshot().startedAtMs, settings);
  const policy: SleepPolicy = {
    idleMs: settings.idleMs,
    deadlineMarginMs: settings.deadlineMarginMs,
    ...(deadlineAtMs !== undefined ? { deadlineAtMs } : {}),
    ...(settings.wakeLeadMs !== undefined ? { wakeLeadMs: settings.wakeLeadMs } : {}),
  };

  api.on("message_received", () => clock.touch("message"));
  api.on("model_call_started", (event) => clock.modelCallStarted(event.callId));
  api.on("model_call_ended", (event) => clock.modelCallEnded(event.callId));
  api.on("after_tool_call", () => clock.touch("tool-call"));
  // While fenced, inbound messages get a refusal instead of a turn (the failed event is not replayed).
  api.on("before_dispatch", () => (clock.fenced ? { handled: true, text: FENCED_REPLY } : undefined));

  const { notifyUrl, secretEnv } = settings;
  const resident = new Resident({
    clock,
    policy,
    instanceId,
    pollMs: settings.pollMs,
    renotifyMs: settings.renotifyMs,
    logger: api.logger,
    ...(notifyUrl && secretEnv
      ? { notify: (notification, signal) => notifyHost(notification, { url: notifyUrl, secretEnv, signal }) }
      : {}),
  });
  if (notifyUrl && !secretEnv)
    api.logger.warn("vercel-sandbox: suspend.notifyUrl needs suspend.secretEnv; not notifying");
  const wake = registerWakeProjection(
    api,
    settings.wakeLeadMs,
    instanceId,
    clock,
    notifyUrl && secretEnv ? { notifyUrl, secretEnv } : undefined,
  );

  let offAgentEvents: (() => void) | undefined;
  api.registerService({
    id: "vercel-sandbox-resident",
    start() {
      // Lifecycle events give the active-turn count: start … end | error, per run id.
      offAgentEvents = api.runtime.events.onAgentEvent((event) => {
        if (event.stream !== "lifecycle") return;
        const phase = (event.data as { phase?: unknown }).phase;
        if (phase === "start") clock.turnStarted(event.runId);
        else if (phase === "end") clock.turnEnded(event.runId, false);
        else if (phase === "error") clock.turnEnded(event.runId, true);
      });
      resident.start();
    },
    async stop() {
      offAgentEvents?.();
      offAgentEvents = undefined;
      await resident.stop();
      await wake?.stop();
    },
  });

  const suspender = new Suspender({
    clock,
    policy,
    providerId,
    instanceId,
    ...(wake ? { wake: () => wake.latest() } : {}),
  });
  const routes = createRoutes(suspender, (method, params) => dispatchGatewayMethod(method, params));
  for (const [name, path] of Object.entries(ROUTES) as [keyof typeof ROUTES, string][]) {
    api.registerHttpRoute({
      path,
      auth: "gateway",
      match: "exact",
      gatewayRuntimeScopeSurface: "trusted-operator",
      handler: routes[name],
    });
  }
  return {
    idle: () => ({ clock: clock.snapshot(), policy }),
    provisionStarted: (leaseId) => clock.provisionStarted(leaseId),
    provisionEnded: (leaseId) => clock.provisionEnded(leaseId),
  };
}

/**
 * Scheduled wake (suspend.wakeLead): cron run times projected to the host as signed snapshots, and the soonest
 * one read by the idle clock. Undefined when not configured.
 */
function registerWakeProjection(
  api: OpenClawPluginApi,
  leadMs: number | undefined,
  instanceId: string,
  clock: IdleClock,
  host: { notifyUrl: string; secretEnv: string } | undefined,
): WakeProjector | undefined {
  if (leadMs === undefined) return undefined;
  const projector = new WakeProjector({
    instanceId,
    leadMs,
    logger: api.logger,
    ...(host
      ? {
          send: (notification, signal) =>
            notifyHost(notification, { url: host.notifyUrl, secretEnv: host.secretEnv, signal }),
        }
      : {}),
  });
  clock.readNextWakeFrom(() => projector.nextWakeAtMs());
  api.on("cron_reconciled", (event, ctx) => projector.reconciled(event.enabled, ctx.getCron?.(), ctx.abortSignal));
  api.on("cron_changed", () => projector.changed());
  return projector;
}
