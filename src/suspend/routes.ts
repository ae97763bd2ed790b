// The three authenticated HTTP routes (`auth: "gateway"`, trusted-operator surface, so they stay reachable
// while the gateway drains or is prepared). Parsing and answers are bounded here; every gateway action goes
// through `dispatch`, which the entry binds to dispatchGatewayMethod inside the request.

import type { IncomingMessage, ServerResponse } from "node:http";
import type { TSchema } from "@sinclair/typebox";
import { Value } from "@sinclair/typebox/value";
import { readJsonBodyWithLimit, sendHttpRequestRejection } from "openclaw/plugin-sdk/webhook-request-guards";
import { MAX_BODY_BYTES, ResumeRequestSchema, SuspendRequestSchema } from "../protocol/index.js";
import { type Dispatch, GatewayCallError, type Suspender } from "./suspender.js";

const BODY_TIMEOUT_MS = 10_000;

export type RouteHandler = (req: IncomingMessage, res: ServerResponse) => Promise<boolean>;

export function sendJson(res: ServerResponse, status: number, body: unknown): void {
  res.statusCode = status;
  res.setHeader("Cache-Control", "no-store");
  res.setHeader("Content-Type", "application/json; charset=utf-8");
  res.end(JSON.stringify(body));
}

function sendError(res: ServerResponse, status: number, type: string, message: string): void {
  sendJson(res, status, { error: { type, message } });
}

function allowOnly(req: IncomingMessage, res: ServerResponse, method: "GET" | "POST"): boolean {
  if ((req.method ?? "GET").toUpperCase() === method) return true;
  res.setHeader("Allow", method);
  sendError(res, 405, "method_not_allowed", `use ${method}`);
  return false;
}

/** Reads and validates a JSON body; answers 400/408/413 itself and returns undefined when it did. */
async function readBody<T>(req: IncomingMessage, res: ServerResponse, schema: TSchema): Promise<T | undefined> {
  const body = await readJsonBodyWithLimit(req, {
    maxBytes: MAX_BODY_BYTES,
    timeoutMs: BODY_TIMEOUT_MS,
    destroyOnLimit: false,
  });
  if (!body.ok) {
    const status = body.code === "PAYLOAD_TOO_LARGE" ? 413 : body.code === "REQUEST_BODY_TIMEOUT" ? 408 : 400;
    if (status === 400) {
      sendError(res, 400, "invalid_request", "request body must be valid JSON");
    } else {
      // The rest of the body is unread: the SDK answers and closes the connection cleanly.
      res.setHeader("Cache-Control", "no-store");
      const answer = JSON.stringify({ error: { type: "invalid_request", message: body.error } });
      await sendHttpRequestRejection(req, res, status, answer, "application/json; charset=utf-8");
    }
    return undefined;
  }
  if (!Value.Check(schema, body.value)) {
    const first = [...Value.Errors(schema, body.value)][0];
    sendError(
      res,
      400,
      "invalid_request",
      `invalid body${first ? ` at '${first.path || "/"}': ${first.message}` : ""}`,
    );
    return undefined;
  }
  return body.value as T;
}

function sendGatewayError(res: ServerResponse, error: unknown): void {
  if (error instanceof GatewayCallError) {
    const status = error.code === "INVALID_REQUEST" ? 400 : error.code === "UNAVAILABLE" ? 503 : 502;
    sendError(res, status, "gateway_error", error.message);
    return;
  }
  sendError(res, 500, "internal_error", "the gateway call failed; see the gateway log");
}

export function createRoutes(suspender: Suspender, dispatch: Dispatch) {
  const status: RouteHandler = async (req, res) => {
    if (!allowOnly(req, res, "GET")) return true;
    try {
      sendJson(res, 200, await suspender.status(dispatch));
    } catch (error) {
      sendGatewayError(res, error);
    }
    return true;
  };
  const suspend: RouteHandler = async (req, res) => {
    if (!allowOnly(req, res, "POST")) return true;
    const body = await readBody<{ requestId: string }>(req, res, SuspendRequestSchema);
    if (!body) return true;
    try {
      sendJson(res, 200, await suspender.suspend(dispatch, body.requestId.trim()));
    } catch (error) {
      sendGatewayError(res, error);
    }
    return true;
  };
  const resume: RouteHandler = async (req, res) => {
    if (!allowOnly(req, res, "POST")) return true;
    const body = await readBody<{ suspensionId: string }>(req, res, ResumeRequestSchema);
    if (!body) return true;
    try {
      sendJson(res, 200, await suspender.resume(dispatch, body.suspensionId.trim()));
    } catch (error) {
      sendGatewayError(res, error);
    }
    return true;
  };
  return { status, suspend, resume };
}
