// The read-only gateway method behind `openclaw vercel-sandbox status`: what only the gateway process knows
// (which leases its keepalive extends, the idle clock of sleep and wake). Plugin CLI commands run in their own
// process, so they ask the running gateway for these through `openclaw gateway call`'s transport.
import type { OpenClawPluginApi } from "openclaw/plugin-sdk/plugin-entry";
import type { CapSnapshot } from "../provider/index.js";
import type { ClockSnapshot } from "../suspend/index.js";
import { dueReason, type NotifyReason, type SleepPolicy } from "../suspend/index.js";

export const STATUS_METHOD = "vercelSandbox.status";

/** The idle clock and the policy it is judged by, as the suspend room holds them. */
export interface IdleSource {
  clock: ClockSnapshot;
  policy: SleepPolicy;
}

export interface IdleStatus {
  nowMs: number;
  startedAtMs: number;
  lastActivityMs: number;
  idleMs: number;
  idleAfterMs: number;
  activeTurns: number;
  activeModelCalls: number;
  activeProvisions: number;
  fence: { sinceMs: number } | null;
  deadlineAtMs: number | null;
  deadlineMarginMs: number;
  /** Why sleep is due now, or null. */
  due: NotifyReason | null;
}

export interface GatewayStatus {
  version: 1;
  /** Leases whose keepalive runs in the gateway process. */
  keepalive: string[];
  /** The idle clock; null when the plugin config has no `suspend` block (no clock runs). */
  idle: IdleStatus | null;
  /** The worker cap (`maxWorkers`): the leases counted against it; absent from plugins older than it. */
  cap?: CapSnapshot;
}

export interface StatusSources {
  keepaliveLeases(): string[];
  idle?: () => IdleSource | undefined;
  cap?: () => CapSnapshot;
}

function idleStatus({ clock, policy }: IdleSource): IdleStatus {
  return {
    nowMs: clock.nowMs,
    startedAtMs: clock.startedAtMs,
    lastActivityMs: clock.lastActivityMs,
    idleMs: Math.max(0, clock.nowMs - clock.lastActivityMs),
    idleAfterMs: policy.idleMs,
    activeTurns: clock.activeTurns,
    activeModelCalls: clock.activeModelCalls,
    activeProvisions: clock.activeProvisions,
    fence: clock.fence ? { sinceMs: clock.fence.sinceMs } : null,
    deadlineAtMs: policy.deadlineAtMs ?? null,
    deadlineMarginMs: policy.deadlineMarginMs,
    due: dueReason(clock, policy) ?? null,
  };
}

export function gatewayStatus(sources: StatusSources): GatewayStatus {
  const idle = sources.idle?.();
  return {
    version: 1,
    keepalive: [...sources.keepaliveLeases()].sort(),
    idle: idle ? idleStatus(idle) : null,
    ...(sources.cap ? { cap: sources.cap() } : {}),
  };
}

/** Read scope, and no profile access: it reads provider and clock state, never user or session state. */
export function registerStatusMethod(api: OpenClawPluginApi, sources: StatusSources): void {
  api.registerGatewayMethod(STATUS_METHOD, ({ respond }) => respond(true, gatewayStatus(sources)), {
    scope: "operator.read",
    profileAccess: "independent",
  });
}
