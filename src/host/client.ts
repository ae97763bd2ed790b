// The host's client for the resident's routes: status, suspend (retrying busy and draining, honouring
// retryAfterMs within a deadline, always with the same requestId) and resume. HTTP through undici with a
// timeout on every call; the gateway token goes only into the Authorization header and never into an error.

import { randomUUID } from "node:crypto";
import { setTimeout as sleep } from "node:timers/promises";
import type { TSchema } from "@sinclair/typebox";
import { Value } from "@sinclair/typebox/value";
import { type Dispatcher, request } from "undici";
import {
  type ResumeResult,
  ResumeResultSchema,
  ROUTES,
  type StatusResult,
  StatusResultSchema,
  type SuspendResult,
  SuspendResultSchema,
} from "../suspend/protocol.js";

export interface GatewayClientOptions {
  /** The gateway's base URL, e.g. https://vm1.example:18789 */
  baseUrl: string;
  /** The gateway token (or password). */
  token: string;
  timeoutMs?: number;
  dispatcher?: Dispatcher;
}

/** The gateway answered with a non-2xx status or an unexpected body. */
export class GatewayHttpError extends Error {
  constructor(
    readonly route: string,
    readonly status: number,
    message: string,
  ) {
    super(`${route}: ${status} ${message}`);
    this.name = "GatewayHttpError";
  }
}

export interface SuspendOptions {
  requestId?: string;
  /** Give up (and release a draining lease) when the next try would start after this long; default 10 min. */
  deadlineMs?: number;
  signal?: AbortSignal;
}

export class GatewayClient {
  readonly #options: GatewayClientOptions;

  constructor(options: GatewayClientOptions) {
    this.#options = options;
  }

  status(): Promise<StatusResult> {
    return this.#call("GET", ROUTES.status, undefined, StatusResultSchema);
  }

  /** One suspend attempt. */
  suspendOnce(requestId: string): Promise<SuspendResult> {
    return this.#call("POST", ROUTES.suspend, { requestId }, SuspendResultSchema);
  }

  /**
   * Suspends, retrying `busy` and `draining` after their retryAfterMs until `ready` or the deadline. On giving up
   * with a draining lease it resumes, so admission reopens at once instead of at the lease's expiry.
   */
  async suspend(options: SuspendOptions = {}): Promise<SuspendResult> {
    const requestId = options.requestId ?? `host-${randomUUID()}`;
    const deadline = Date.now() + (options.deadlineMs ?? 600_000);
    for (;;) {
      const result = await this.suspendOnce(requestId);
      if (result.status === "ready") return result;
      if (Date.now() + result.retryAfterMs > deadline || options.signal?.aborted) {
        if (result.status === "draining") await this.resume(result.suspensionId);
        return result;
      }
      await sleep(result.retryAfterMs, undefined, { signal: options.signal });
    }
  }

  resume(suspensionId: string): Promise<ResumeResult> {
    return this.#call("POST", ROUTES.resume, { suspensionId }, ResumeResultSchema);
  }

  async #call<T>(method: "GET" | "POST", route: string, body: unknown, schema: TSchema): Promise<T> {
    const timeoutMs = this.#options.timeoutMs ?? 30_000;
    const response = await request(new URL(route, this.#options.baseUrl), {
      method,
      headers: {
        authorization: `Bearer ${this.#options.token}`,
        ...(body === undefined ? {} : { "content-type": "application/json" }),
      },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      headersTimeout: timeoutMs,
      bodyTimeout: timeoutMs,
      ...(this.#options.dispatcher ? { dispatcher: this.#options.dispatcher } : {}),
    });
    const text = await response.body.text();
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      throw new GatewayHttpError(route, response.statusCode, "answered a body that is not JSON");
    }
    if (response.statusCode !== 200) {
      const message = (parsed as { error?: { message?: unknown } })?.error?.message;
      throw new GatewayHttpError(route, response.statusCode, typeof message === "string" ? message : "error");
    }
    if (!Value.Check(schema, parsed)) throw new GatewayHttpError(route, 200, "answered an unexpected body");
    return parsed as T;
  }
}
