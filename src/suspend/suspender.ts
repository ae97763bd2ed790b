// The suspend/resume handshake behind the routes, under one admission lock: recheck our clock, release our
// workers through the gateway, then `gateway.suspend.prepare` with drain. The gateway is reached only through
// `dispatch` (dispatchGatewayMethod inside the authenticated request), so this file is testable with a stand-in.

import type { GatewayMethodDispatchResponse } from "openclaw/plugin-sdk/gateway-method-runtime";
import type { ResumeResult, StatusResult, SuspendResult, WakeSnapshot, Worker } from "../protocol/index.js";
import type { IdleClock } from "./clock.js";
import { checkSuspend, dueReason, type SleepPolicy } from "./decide.js";
import { AdmissionLock } from "./lock.js";
import { needsSessionKeys, ourWorkers, planReclaim, type SessionRef, sessionKeys } from "./workers.js";

export type Dispatch = (method: string, params?: unknown) => Promise<GatewayMethodDispatchResponse>;

/** Retry hint when the gateway refuses without one, and when a worker is still being released. */
const GATEWAY_RETRY_MS = 1_000;
const RECLAIM_RETRY_MS = 5_000;
/** How soon a host should ask again about a draining lease (answered from `gateway.suspend.status`). */
const DRAIN_POLL_MS = 2_000;

interface Lease {
  requestId: string;
  suspensionId: string;
  expiresAtMs: number;
  phase: "draining" | "ready";
}

/** The gateway answered a handshake call with an error we cannot turn into a retry hint. */
export class GatewayCallError extends Error {
  constructor(
    readonly method: string,
    readonly code: string,
    message: string,
  ) {
    super(`${method} failed (${code}): ${message}`);
    this.name = "GatewayCallError";
  }

  static from(method: string, response: GatewayMethodDispatchResponse): GatewayCallError {
    return new GatewayCallError(method, response.error?.code ?? "UNKNOWN", response.error?.message ?? "no message");
  }
}

export interface SuspenderOptions {
  clock: IdleClock;
  policy: SleepPolicy;
  providerId: string;
  instanceId: string;
  /** Clears our lease once the gateway's would have expired (the gateway restores admission by itself). */
  now?: () => number;
  /** Scheduled wake: the latest wake snapshot, answered in status so a host that missed a notification recovers it. */
  wake?: () => WakeSnapshot | undefined;
}

export class Suspender {
  readonly #lock = new AdmissionLock();
  readonly #options: SuspenderOptions;
  readonly #now: () => number;
  #lease: Lease | undefined;

  constructor(options: SuspenderOptions) {
    this.#options = options;
    this.#now = options.now ?? Date.now;
  }

  suspend(dispatch: Dispatch, requestId: string): Promise<SuspendResult> {
    return this.#lock.run(() => this.#suspend(dispatch, requestId));
  }

  resume(dispatch: Dispatch, suspensionId: string): Promise<ResumeResult> {
    return this.#lock.run(async () => {
      const response = await dispatch("gateway.suspend.resume", { suspensionId });
      if (!response.ok) throw GatewayCallError.from("gateway.suspend.resume", response);
      const payload = response.payload as { resumed?: unknown } | undefined;
      if (this.#lease?.suspensionId === suspensionId) this.#lease = undefined;
      this.#options.clock.restart();
      return { status: "running", resumed: payload?.resumed === true };
    });
  }

  /**
   * Under the admission lock too: a host that aborted a suspend asks status to learn whether that request took a
   * lease, so status must answer after every suspend that arrived before it.
   */
  status(dispatch: Dispatch): Promise<StatusResult> {
    return this.#lock.run(() => this.#status(dispatch));
  }

  async #status(dispatch: Dispatch): Promise<StatusResult> {
    const clock = this.#options.clock.snapshot();
    const { policy } = this.#options;
    const lease = this.#currentLease();
    let suspension: StatusResult["suspension"] = { phase: "running" };
    if (lease) {
      const gateway = await dispatch("gateway.suspend.status", { suspensionId: lease.suspensionId });
      const status = (gateway.payload as { status?: unknown; expiresAtMs?: unknown } | undefined)?.status;
      if (gateway.ok && status === "running") this.#lease = undefined;
      else {
        if (gateway.ok && status === "ready") lease.phase = "ready";
        suspension = { phase: lease.phase, ...pick(lease) };
      }
    }
    const due = dueReason(clock, policy);
    return {
      instanceId: this.#options.instanceId,
      nowMs: clock.nowMs,
      startedAtMs: clock.startedAtMs,
      lastActivityMs: clock.lastActivityMs,
      idleMs: clock.nowMs - clock.lastActivityMs,
      idleAfterMs: policy.idleMs,
      activeTurns: clock.activeTurns,
      activeModelCalls: clock.activeModelCalls,
      activeProvisions: clock.activeProvisions,
      ...(clock.fence ? { fence: { sinceMs: clock.fence.sinceMs } } : {}),
      ...(policy.deadlineAtMs !== undefined ? { deadlineAtMs: policy.deadlineAtMs } : {}),
      ...(due ? { due } : {}),
      workers: suspension.phase === "running" ? await this.#workers(dispatch) : null,
      suspension,
      ...this.#wake(policy),
    };
  }

  async #suspend(dispatch: Dispatch, requestId: string): Promise<SuspendResult> {
    const lease = this.#currentLease();
    if (lease?.requestId === requestId && lease.phase === "draining") {
      // A host polling a draining lease: `status` re-samples the gateway's work without spending the prepare
      // rate limit (30 a minute); only once it is ready does prepare renew the lease below.
      const polled = await dispatch("gateway.suspend.status", { suspensionId: lease.suspensionId });
      const payload = (polled.payload ?? {}) as Record<string, unknown>;
      if (polled.ok && payload.status === "draining") {
        return {
          status: "draining",
          suspensionId: lease.suspensionId,
          expiresAtMs: retryHint(payload.expiresAtMs, lease.expiresAtMs),
          retryAfterMs: DRAIN_POLL_MS,
          ...activeCount(payload),
        };
      }
      if (polled.ok && payload.status === "running") this.#lease = undefined;
    }
    if (this.#currentLease()?.requestId !== requestId) {
      const check = checkSuspend(this.#options.clock.snapshot(), this.#options.policy);
      if (!check.ok) return { status: "busy", reason: "activity", retryAfterMs: check.retryAfterMs };
      const reclaim = await this.#reclaim(dispatch);
      if (reclaim) return reclaim;
    }
    const response = await dispatch("gateway.suspend.prepare", { requestId, drain: true });
    if (!response.ok) return busyFromError("gateway.suspend.prepare", response);
    const payload = response.payload as Record<string, unknown>;
    if (payload.status !== "ready" && payload.status !== "draining") {
      return {
        status: "busy",
        reason: "gateway",
        retryAfterMs: retryHint(payload.retryAfterMs, GATEWAY_RETRY_MS),
        ...activeCount(payload),
      };
    }
    const held: Lease = {
      requestId,
      suspensionId: String(payload.suspensionId),
      expiresAtMs: Number(payload.expiresAtMs),
      phase: payload.status,
    };
    this.#lease = held;
    if (held.phase === "ready")
      return { status: "ready", suspensionId: held.suspensionId, expiresAtMs: held.expiresAtMs };
    return {
      status: "draining",
      suspensionId: held.suspensionId,
      expiresAtMs: held.expiresAtMs,
      retryAfterMs: Math.min(DRAIN_POLL_MS, retryHint(payload.retryAfterMs, DRAIN_POLL_MS)),
      ...activeCount(payload),
    };
  }

  /**
   * Releases our live workers, then lists again: sleep waits (busy, reclaim) until none is live or being
   * released, so core has reconciled and torn down every one before the gateway is prepared.
   */
  async #reclaim(dispatch: Dispatch): Promise<SuspendResult | undefined> {
    const workers = await this.#workers(dispatch);
    if (workers === null) return { status: "busy", reason: "gateway", retryAfterMs: GATEWAY_RETRY_MS };
    let keys = new Map<string, SessionRef>();
    if (needsSessionKeys(workers)) {
      const listed = await dispatch("sessions.list", {});
      if (!listed.ok) return { status: "busy", reason: "gateway", retryAfterMs: GATEWAY_RETRY_MS };
      keys = sessionKeys(listed.payload);
    }
    const plan = planReclaim(workers, keys);
    if (plan.calls.length === 0 && plan.releasing === 0) return undefined;
    for (const { method, params } of plan.calls) await dispatch(method, params);
    const after = await this.#workers(dispatch);
    const left = after === null ? undefined : planReclaim(after);
    if (left && left.calls.length === 0 && left.releasing === 0) return undefined;
    return { status: "busy", reason: "reclaim", retryAfterMs: RECLAIM_RETRY_MS };
  }

  async #workers(dispatch: Dispatch): Promise<Worker[] | null> {
    const response = await dispatch("environments.list", {});
    return response.ok ? ourWorkers(response.payload, this.#options.providerId) : null;
  }

  #wake(policy: SleepPolicy): Pick<StatusResult, "wake" | "wakeLeadMs"> {
    const snapshot = this.#options.wake?.();
    return {
      ...(snapshot ? { wake: snapshot } : {}),
      ...(policy.wakeLeadMs !== undefined ? { wakeLeadMs: policy.wakeLeadMs } : {}),
    };
  }

  #currentLease(): Lease | undefined {
    if (this.#lease && this.#lease.expiresAtMs <= this.#now()) this.#lease = undefined;
    return this.#lease;
  }
}

function pick(lease: Lease) {
  return { requestId: lease.requestId, suspensionId: lease.suspensionId, expiresAtMs: lease.expiresAtMs };
}

/** The gateway's count of tracked work and its blockers' messages (bounded), for the host's logs. */
function activeCount(payload: Record<string, unknown>): { activeCount?: number; blockers?: string[] } {
  const blockers = Array.isArray(payload.blockers)
    ? payload.blockers.slice(0, 16).map((b) => {
        const { message, kind } = (b ?? {}) as { message?: unknown; kind?: unknown };
        return String(typeof message === "string" ? message : (kind ?? "unknown")).slice(0, 300);
      })
    : undefined;
  return {
    ...(typeof payload.activeCount === "number" ? { activeCount: payload.activeCount } : {}),
    ...(blockers && blockers.length > 0 ? { blockers } : {}),
  };
}

function retryHint(value: unknown, fallback: number): number {
  return typeof value === "number" && Number.isFinite(value) && value >= 0 ? Math.round(value) : fallback;
}

/** A retryable gateway error (another lease, rate limit, a restart) is busy; anything else is a failure. */
function busyFromError(method: string, response: GatewayMethodDispatchResponse): SuspendResult {
  const error = response.error;
  if (error?.retryable || error?.code === "UNAVAILABLE") {
    return { status: "busy", reason: "gateway", retryAfterMs: retryHint(error.retryAfterMs, GATEWAY_RETRY_MS) };
  }
  throw GatewayCallError.from(method, response);
}
