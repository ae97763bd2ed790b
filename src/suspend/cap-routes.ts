// The worker cap's two authenticated routes (`auth: "gateway"`, trusted-operator surface, like the suspend
// routes): GET lists our workers with the sessions holding each and whether one is in an active turn; POST
// reclaims the least recently active idle worker among the leases it names through `sessions.reclaim` (core
// reconciles the workspace, then tears the worker down) and answers once the gateway no longer lists it live.
// Every gateway action goes through `dispatch` (dispatchGatewayMethod inside the request).
import type { IncomingMessage, ServerResponse } from "node:http";
import { Value } from "@sinclair/typebox/value";
import { readJsonBodyWithLimit } from "openclaw/plugin-sdk/webhook-request-guards";
import {
  MAX_BODY_BYTES,
  type PlacementResult,
  type ReclaimRequest,
  ReclaimRequestSchema,
  type ReclaimResult,
  type RoomRequest,
  RoomRequestSchema,
  type RoomResult,
  SESSION_KEY_MAX,
  type WorkersResult,
} from "../protocol/index.js";
import { type CapCandidate, capWorkers, chooseVictim, publicWorker, sessionPlacement } from "./cap-choice.js";
import type { SessionState } from "./sessions.js";
import type { Dispatch } from "./suspender.js";
import { sessionKeys } from "./workers.js";

/** A reclaim reconciles the workspace and proves the sandbox released: minutes at most. */
const RECLAIM_TIMEOUT_MS = 10 * 60_000;

/** A gateway call the cap needed failed; the message names the method and the gateway's code. */
export class CapGatewayError extends Error {
  override readonly name = "CapGatewayError";
}

async function call(dispatch: Dispatch, method: string, params: unknown): Promise<unknown> {
  const response = await dispatch(method, params);
  if (!response.ok) {
    const code = response.error?.code ?? "UNKNOWN";
    throw new CapGatewayError(`${method} failed (${code}): ${String(response.error?.message ?? "").slice(0, 300)}`);
  }
  return response.payload;
}

export class CapService {
  constructor(
    private readonly providerId: string,
    private readonly activity: (sessionKey: string) => SessionState | undefined,
  ) {}

  async candidates(dispatch: Dispatch): Promise<CapCandidate[]> {
    const listed = await call(dispatch, "environments.list", {});
    const sessions = await call(dispatch, "sessions.list", {});
    return capWorkers(listed, this.providerId, sessionKeys(sessions), this.activity);
  }

  async workers(dispatch: Dispatch): Promise<WorkersResult> {
    return { workers: (await this.candidates(dispatch)).map(publicWorker) };
  }

  async placement(dispatch: Dispatch, sessionKey: string): Promise<PlacementResult> {
    const sessions = await call(dispatch, "sessions.list", {});
    const listed = await call(dispatch, "environments.list", {});
    return { placement: sessionPlacement(sessions, listed, sessionKey) ?? null };
  }

  async reclaimOne(dispatch: Dispatch, request: ReclaimRequest): Promise<ReclaimResult> {
    const choice = chooseVictim(await this.candidates(dispatch), new Set(request.among));
    if (!choice.victim) return { status: "busy", busy: choice.busy, candidates: choice.candidates };
    const victim = choice.victim;
    for (const { method, params } of victim.release ?? []) await call(dispatch, method, params);
    const after = await this.candidates(dispatch);
    if (after.some((w) => w.leaseId === victim.leaseId)) {
      throw new CapGatewayError(`worker ${victim.leaseId} is still listed after its release; not released yet`);
    }
    return { status: "reclaimed", worker: publicWorker(victim) };
  }
}

function send(res: ServerResponse, status: number, body: unknown): boolean {
  res.statusCode = status;
  res.setHeader("Cache-Control", "no-store");
  res.setHeader("Content-Type", "application/json; charset=utf-8");
  res.end(JSON.stringify(body));
  return true;
}

/** Whether `req` uses `method`; otherwise it has been answered 405, naming the one allowed. */
function allowed(req: IncomingMessage, res: ServerResponse, method: "GET" | "POST"): boolean {
  if ((req.method ?? "GET").toUpperCase() === method) return true;
  res.setHeader("Allow", method);
  send(res, 405, { error: { type: "method_not_allowed", message: `use ${method}` } });
  return false;
}

const failed = (res: ServerResponse, error: unknown) =>
  error instanceof CapGatewayError
    ? send(res, 502, { error: { type: "gateway_error", message: error.message } })
    : send(res, 500, { error: { type: "internal_error", message: "the gateway call failed; see the gateway log" } });

/** Makes room at the cap for a host's placement or message (the plugin's cap, in this gateway process). */
export type MakeRoom = (request: RoomRequest) => Promise<RoomResult["outcome"]>;

export function createCapRoutes(service: CapService, dispatch: Dispatch, makeRoom?: MakeRoom) {
  const workers = async (req: IncomingMessage, res: ServerResponse) => {
    if (!allowed(req, res, "GET")) return true;
    try {
      return send(res, 200, await service.workers(dispatch));
    } catch (error) {
      return failed(res, error);
    }
  };
  const reclaim = async (req: IncomingMessage, res: ServerResponse) => {
    if (!allowed(req, res, "POST")) return true;
    const body = await readJsonBodyWithLimit(req, { maxBytes: MAX_BODY_BYTES * 8, timeoutMs: 10_000 });
    if (!body.ok || !Value.Check(ReclaimRequestSchema, body.value)) {
      return send(res, 400, { error: { type: "invalid_request", message: "body must be { among: [lease ids] }" } });
    }
    try {
      return send(res, 200, await service.reclaimOne(dispatch, body.value));
    } catch (error) {
      return failed(res, error);
    }
  };
  const placement = async (req: IncomingMessage, res: ServerResponse) => {
    if (!allowed(req, res, "GET")) return true;
    const key = new URL(req.url ?? "/", "http://gateway.invalid").searchParams.get("session");
    if (!key || key.length > SESSION_KEY_MAX) {
      return send(res, 400, {
        error: {
          type: "invalid_request",
          message: `?session= must name a session key (1–${SESSION_KEY_MAX} characters)`,
        },
      });
    }
    try {
      return send(res, 200, await service.placement(dispatch, key));
    } catch (error) {
      return failed(res, error);
    }
  };
  const room = async (req: IncomingMessage, res: ServerResponse) => {
    if (!allowed(req, res, "POST")) return true;
    const body = await readJsonBodyWithLimit(req, { maxBytes: MAX_BODY_BYTES, timeoutMs: 10_000 });
    if (!body.ok || !Value.Check(RoomRequestSchema, body.value)) {
      return send(res, 400, {
        error: {
          type: "invalid_request",
          message: `body must be { session: <key, 1–${SESSION_KEY_MAX} characters> } or { profileId: <id> }`,
        },
      });
    }
    if (!makeRoom) return send(res, 200, { outcome: "skipped" } satisfies RoomResult);
    try {
      return send(res, 200, { outcome: await makeRoom(body.value) } satisfies RoomResult);
    } catch (error) {
      return failed(res, error);
    }
  };
  return { workers, reclaim, placement, room, timeoutMs: RECLAIM_TIMEOUT_MS };
}
