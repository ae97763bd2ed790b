// The resident's one outbound call: a signed POST of the notification to the host, through undici with
// timeouts, retried with backoff (p-retry) on network failures, 408, 429 and 5xx. The HMAC secret is read from
// the environment variable the config names, at send time, and appears nowhere else: not in errors, not in logs.

import pRetry, { AbortError } from "p-retry";
import { request } from "undici";
import type { Notification, WakeNotification } from "../protocol/index.js";
import { signNotification } from "../protocol/index.js";

export interface NotifierOptions {
  url: string;
  secretEnv: string;
  env?: NodeJS.ProcessEnv;
  retries?: number;
  minTimeoutMs?: number;
  timeoutMs?: number;
  signal?: AbortSignal;
}

/** The host could not be notified; says which variable or status, never the secret. */
export class NotifyError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "NotifyError";
  }
}

const RETRYABLE = (status: number) => status === 408 || status === 429 || status >= 500;

export async function notifyHost(
  notification: Notification | WakeNotification,
  options: NotifierOptions,
): Promise<void> {
  const secret = (options.env ?? process.env)[options.secretEnv];
  if (!secret) throw new NotifyError(`environment variable ${options.secretEnv} (suspend.secretEnv) is not set`);
  const body = JSON.stringify(notification);
  const timeoutMs = options.timeoutMs ?? 10_000;
  await pRetry(
    async () => {
      let status: number;
      try {
        const response = await request(options.url, {
          method: "POST",
          headers: { "content-type": "application/json", ...signNotification(secret, body) },
          body,
          headersTimeout: timeoutMs,
          bodyTimeout: timeoutMs,
          signal: options.signal,
        });
        status = response.statusCode;
        await response.body.dump();
      } catch (error) {
        throw new NotifyError(`host unreachable: ${(error as Error).name}`);
      }
      if (status >= 200 && status < 300) return;
      const failure = new NotifyError(`host answered ${status}`);
      if (!RETRYABLE(status)) throw new AbortError(failure);
      throw failure;
    },
    {
      retries: options.retries ?? 4,
      minTimeout: options.minTimeoutMs ?? 1_000,
      maxTimeout: 30_000,
      factor: 2,
      signal: options.signal,
    },
  );
}
