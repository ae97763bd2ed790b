// A stand-in for the gateway behind dispatchGatewayMethod (the host's coordinator, not ours), keeping the rules
// of 2026.9.2's suspension handshake that the routes rely on: one lease at a time, the same requestId renews,
// drain with active work → draining, resume by id. It records every call.
import type { GatewayMethodDispatchResponse } from "openclaw/plugin-sdk/gateway-method-runtime";
import type { Dispatch } from "../../src/suspend/suspender.js";

interface Env {
  id: string;
  worker: { providerId: string; state: string; attachedSessionIds: string[] };
}

export function fakeGateway() {
  const state = {
    activeWork: 0,
    lease: undefined as { requestId: string; suspensionId: string; expiresAtMs: number } | undefined,
    environments: [] as Env[],
    sessions: [] as Array<{ key: string; sessionId: string; agentId: string }>,
    failing: new Set<string>(),
    /** When set, environments.destroy only starts teardown (state destroying) instead of removing the worker. */
    slowDestroy: false,
    calls: [] as Array<{ method: string; params: unknown }>,
  };
  let leases = 0;
  const ok = (payload: unknown): GatewayMethodDispatchResponse => ({ ok: true, payload });
  const fail = (code: string, message: string, extra: object = {}): GatewayMethodDispatchResponse => ({
    ok: false,
    error: { code, message, ...extra },
  });
  const dispatch: Dispatch = async (method, params) => {
    state.calls.push({ method, params });
    await new Promise((resolve) => setImmediate(resolve));
    if (state.failing.has(method)) return fail("UNAVAILABLE", "injected", { retryable: true });
    const p = (params ?? {}) as Record<string, string>;
    switch (method) {
      case "environments.list":
        return ok({ environments: state.environments });
      case "sessions.list":
        return ok({ sessions: state.sessions });
      case "sessions.reclaim": {
        const id = state.sessions.find((row) => row.key === p.key)?.sessionId;
        if (!id) return fail("INVALID_REQUEST", `unknown session ${p.key}`);
        state.environments = state.environments.filter((e) => !e.worker.attachedSessionIds.includes(id));
        return ok({ ok: true });
      }
      case "environments.destroy":
        if (state.slowDestroy) {
          for (const e of state.environments) if (e.id === p.environmentId) e.worker.state = "destroying";
        } else {
          state.environments = state.environments.filter((e) => e.id !== p.environmentId);
        }
        return ok({ ok: true });
      case "gateway.suspend.prepare": {
        if (state.lease && state.lease.requestId !== p.requestId) {
          return fail("UNAVAILABLE", "another suspension is held", { retryable: true, retryAfterMs: 90_000 });
        }
        state.lease ??= { requestId: p.requestId!, suspensionId: `susp-${++leases}`, expiresAtMs: 0 };
        state.lease.expiresAtMs = Date.now() + 120_000;
        const { suspensionId, expiresAtMs } = state.lease;
        if (state.activeWork > 0) {
          return ok({
            status: "draining",
            suspensionId,
            expiresAtMs,
            retryAfterMs: 20_000,
            activeCount: 1,
            blockers: [{ kind: "chat-run", count: 1, message: "1 chat run(s)" }],
          });
        }
        return ok({ status: "ready", suspensionId, expiresAtMs, activeCount: 0, blockers: [] });
      }
      case "gateway.suspend.status":
        if (!state.lease || state.lease.suspensionId !== p.suspensionId) return ok({ status: "running" });
        return ok({ status: state.activeWork > 0 ? "draining" : "ready", expiresAtMs: state.lease.expiresAtMs });
      case "gateway.suspend.resume":
        if (state.lease && state.lease.suspensionId !== p.suspensionId) {
          return fail("INVALID_REQUEST", "gateway suspension id does not match");
        }
        if (!state.lease) return ok({ ok: true, status: "running", resumed: false });
        state.lease = undefined;
        return ok({ ok: true, status: "running", resumed: true });
      default:
        return fail("INVALID_REQUEST", `unknown method ${method}`);
    }
  };
  return { state, dispatch, methods: () => state.calls.map((c) => c.method) };
}
