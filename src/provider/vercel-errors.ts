// Classifies what the SDK throws into the few cases the provider decides on. Works for every supported SDK
// version by reading the HTTP status and error code off the error rather than relying on its class identity.
import { messageOf } from "./redact.js";

export type FailureKind = "not_found" | "conflict" | "gone" | "transient" | "auth" | "rejected" | "aborted";

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

export function classify(error: unknown, operation: string): VercelApiError {
  if (error instanceof VercelApiError) return error;
  const status = statusOf(error);
  const code = codeOf(error);
  const detail = messageOf(error);
  const isAbort = (error as { name?: string })?.name === "AbortError";
  let kind: FailureKind;
  if (isAbort) kind = "aborted";
  else if (status === undefined) kind = "transient";
  else if (status === 404) kind = "not_found";
  else if (status === 409) kind = "conflict";
  else if (status === 410) kind = "gone";
  else if (status === 401 || status === 403) kind = "auth";
  else if (status === 429 || status >= 500) kind = "transient";
  else kind = "rejected";
  return new VercelApiError(kind, operation, status, code, detail);
}

export function isFailure(error: unknown, ...kinds: FailureKind[]): error is VercelApiError {
  return error instanceof VercelApiError && kinds.includes(error.kind);
}
