// The host's client for the resident's routes: status, suspend (retrying busy and draining, honouring
// retryAfterMs within a deadline, always with the same requestId; an abort at any point releases what the
// gateway may have taken) and resume. HTTP through undici with a timeout on every call; the gateway token goes
// only into the Authorization header and never into an error.

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
} from "../protocol/index.js";

export interface GatewayClientOptions {
  /** The gateway's base URL, e.g. https://vm1.example:18789 */
  baseUrl: string;
  /** The gateway token (or password). */
  token: string;
  /** Bounds each request (30 s by default); a suspend request may wait for what is left of its deadline. */
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

/** What an aborted suspend did about the gateway's admission before rejecting. */
export type AbortRelease =
  /** Aborted before any request: nothing can have been taken. */
  | "nothing-sent"
  /** The plugin holds no lease for this requestId (it answered busy, or never got the request). */
  | "nothing-held"
  /** A lease for this requestId (draining or ready) was resumed: admission is open again. */
  | "resumed"
  /** The release itself failed (see `releaseError`): the lease, if any, ends at its expiry. */
  | "release-failed";

/**
 * `suspend` was aborted through its signal. Named "AbortError" like the platform's abort errors, so code that
 * checks `error.name` treats it as one; `released` says whether admission had to be reopened.
 */
export class SuspendAbortedError extends Error {
  constructor(
    readonly requestId: string,
    readonly released: AbortRelease,
    reason: unknown,
    readonly releaseError?: unknown,
  ) {
    super(`suspend ${requestId} aborted (${released})`, { cause: reason });
    this.name = "AbortError";
  }
}

export interface SuspendOptions {
  requestId?: string;
  /** Give up (and release a draining lease) when the next try would start after this long; default 10 min. */
  deadlineMs?: number;
  /** Aborts the request in flight or the wait between tries; the promise rejects with SuspendAbortedError. */
  signal?: AbortSignal;
}

export class GatewayClient {
  readonly #options: GatewayClientOptions;
  readonly #timeoutMs: number;

  constructor(options: GatewayClientOptions) {
    this.#options = options;
    this.#timeoutMs = options.timeoutMs ?? 30_000;
  }

  status(): Promise<StatusResult> {
    return this.#call("GET", ROUTES.status, undefined, StatusResultSchema);
  }

  /** One suspend attempt. */
  /** One suspend request. `timeoutMs` (default: the client's) bounds it: the route reclaims workers first. */
  suspendOnce(requestId: string, signal?: AbortSignal, timeoutMs?: number): Promise<SuspendResult> {
    return this.#call("POST", ROUTES.suspend, { requestId }, SuspendResultSchema, signal, timeoutMs);
  }

  /**
   * Suspends, retrying `busy` and `draining` after their retryAfterMs until `ready` or the deadline. On giving up
   * with a draining lease it resumes, so admission reopens at once instead of at the lease's expiry. An abort
   * (before a request, during one, or while waiting to retry) releases any lease this requestId may hold, then
   * rejects with SuspendAbortedError.
   */
  async suspend(options: SuspendOptions = {}): Promise<SuspendResult> {
    const requestId = options.requestId ?? `host-${randomUUID()}`;
    const { signal } = options;
    const deadline = Date.now() + (options.deadlineMs ?? 600_000);
    let sent = false;
    try {
      for (;;) {
        signal?.throwIfAborted();
        sent = true;
        // The route reclaims the workers (their release and proof of absence) before it answers, which may take
        // longer than a status call: each request may wait for what is left of the deadline.
        const result = await this.suspendOnce(requestId, signal, Math.max(this.#timeoutMs, deadline - Date.now()));
        signal?.throwIfAborted();
        if (result.status === "ready") return result;
        if (Date.now() + result.retryAfterMs > deadline) {
          if (result.status === "draining") await this.resume(result.suspensionId);
          return result;
        }
        await sleep(result.retryAfterMs, undefined, signal ? { signal } : {});
      }
    } catch (error) {
      if (!signal?.aborted) throw error;
      throw await this.#release(requestId, sent, signal.reason);
    }
  }

  /**
   * After an abort: whether the gateway admitted or fenced anything for `requestId` is known only to the plugin
   * (an aborted request may still be running there). Its status route answers after every suspend that reached
   * it first (one admission lock), so a lease held for this requestId shows there, and is resumed.
   */
  async #release(requestId: string, sent: boolean, reason: unknown): Promise<SuspendAbortedError> {
    if (!sent) return new SuspendAbortedError(requestId, "nothing-sent", reason);
    try {
      const { suspension } = await this.status();
      if (suspension.phase === "running" || suspension.requestId !== requestId) {
        return new SuspendAbortedError(requestId, "nothing-held", reason);
      }
      await this.resume(suspension.suspensionId);
      return new SuspendAbortedError(requestId, "resumed", reason);
    } catch (error) {
      return new SuspendAbortedError(requestId, "release-failed", reason, error);
    }
  }

  resume(suspensionId: string): Promise<ResumeResult> {
    return this.#call("POST", ROUTES.resume, { suspensionId }, ResumeResultSchema);
  }

  async #call<T>(
    method: "GET" | "POST",
    route: string,
    body: unknown,
    schema: TSchema,
    signal?: AbortSignal,
    timeoutMs = this.#timeoutMs,
  ): Promise<T> {
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
      ...(signal ? { signal } : {}),
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
