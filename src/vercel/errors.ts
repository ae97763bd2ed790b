// Classifies what the SDK throws into the few cases the provider decides on. Works for every supported SDK
// version by reading the HTTP status and error code off the error rather than relying on its class identity.
//
// Only failures that say nothing about the request's fate are transient: 408, 429, 5xx, and network-level
// errors (a reset or refused connection, a socket closed mid-response, a timeout). Anything else without an
// HTTP status, such as a TypeError raised by our own code, is a defect: retrying it, or polling to adopt a
// sandbox it never created, only hides it.
import { errors as undiciErrors } from "undici";
import { messageOf } from "../infra/index.js";

export type FailureKind =
  | "not_found"
  | "conflict"
  | "gone"
  | "transient"
  | "auth"
  | "rejected"
  | "aborted"
  | "unexpected";

export class VercelApiError extends Error {
  override readonly name = "VercelApiError";
  constructor(
    readonly kind: FailureKind,
    readonly operation: string,
    readonly status: number | undefined,
    readonly code: string | undefined,
    detail: string,
  ) {
    super(`Vercel ${operation} failed (${status ?? kind}${code ? ` ${code}` : ""}): ${detail}`);
  }
}

function statusOf(error: unknown): number | undefined {
  const status = (error as { response?: { status?: unknown } })?.response?.status;
  return typeof status === "number" ? status : undefined;
}

function codeOf(error: unknown): string | undefined {
  const code = (error as { json?: { error?: { code?: unknown } } })?.json?.error?.code;
  return typeof code === "string" ? code : undefined;
}

/** Socket-level errno codes: the connection failed, so the request may or may not have been applied. */
const NETWORK_CODES = new Set([
  "ECONNRESET",
  "ECONNREFUSED",
  "ECONNABORTED",
  "EPIPE",
  "ETIMEDOUT",
  "EHOSTUNREACH",
  "ENETUNREACH",
  "ENETDOWN",
  "EAI_AGAIN",
]);

/**
 * undici's transport failures. Its error classes answer `instanceof` by a registered symbol, so this also
 * recognises errors from Node's bundled copy (global fetch) and the SDK's own undici Agent.
 */
const UNDICI_TRANSPORT = [
  undiciErrors.SocketError,
  undiciErrors.ConnectTimeoutError,
  undiciErrors.HeadersTimeoutError,
  undiciErrors.BodyTimeoutError,
  undiciErrors.ClientClosedError,
  undiciErrors.ClientDestroyedError,
] as const;

function isNetworkLevel(error: unknown, depth = 0): boolean {
  if (!error || typeof error !== "object" || depth > 4) return false;
  if (UNDICI_TRANSPORT.some((kind) => error instanceof kind)) return true;
  const { name, code, message, cause } = error as {
    name?: unknown;
    code?: unknown;
    message?: unknown;
    cause?: unknown;
  };
  if (name === "TimeoutError") return true;
  if (typeof code === "string" && NETWORK_CODES.has(code)) return true;
  // fetch reports every transport failure as TypeError("fetch failed"), with the reason as its cause.
  if (name === "TypeError" && message === "fetch failed") return true;
  return isNetworkLevel(cause, depth + 1);
}

function kindOf(error: unknown, status: number | undefined): FailureKind {
  if ((error as { name?: string })?.name === "AbortError") return "aborted";
  if (status === undefined) return isNetworkLevel(error) ? "transient" : "unexpected";
  if (status === 404) return "not_found";
  if (status === 409) return "conflict";
  if (status === 410) return "gone";
  if (status === 401 || status === 403) return "auth";
  if (status === 408 || status === 429 || status >= 500) return "transient";
  return "rejected";
}

export function classify(error: unknown, operation: string): VercelApiError {
  if (error instanceof VercelApiError) return error;
  const status = statusOf(error);
  return new VercelApiError(kindOf(error, status), operation, status, codeOf(error), messageOf(error));
}

export function isFailure(error: unknown, ...kinds: FailureKind[]): error is VercelApiError {
  return error instanceof VercelApiError && kinds.includes(error.kind);
}
