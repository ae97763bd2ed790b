// The fault matrix's vocabulary: which Vercel call a request is, which faults the emulator injects, and the
// outcome the WorkerProvider contract asks for in each (fault, call, operation) cell. Pure: the spec that
// drives the cells (matrix.test.ts) owns every process and request.
import type { FaultRule } from "../../src/emulator/index.js";

export type OperationId = "provision" | "inspect" | "destroy" | "maintain";
export const OPERATIONS: readonly OperationId[] = ["provision", "inspect", "destroy", "maintain"];

export interface Call {
  id: string;
  method: string;
  path: RegExp;
  /** The provider wraps this call in its own retry of transient failures (client.ts `retrying`). */
  retriedByProvider: boolean;
}

const SESSION = "^/v2/sandboxes/sessions/[^/]+";

/**
 * The nine calls, plus `list`, which maintenance makes. Every request an operation makes must be one
 * of them (the spec fails on an unclassified request), so the table covers all of an operation's traffic.
 */
export const CALLS: readonly Call[] = [
  { id: "create", method: "POST", path: /^\/v[23]\/sandboxes$/, retriedByProvider: false },
  {
    id: "get",
    method: "GET",
    path: /^\/v2\/sandboxes\/(?!sessions$|snapshots$|drives$)[^/]+$/,
    retriedByProvider: true,
  },
  { id: "list", method: "GET", path: /^\/v2\/sandboxes$/, retriedByProvider: true },
  { id: "run command", method: "POST", path: new RegExp(`${SESSION}/cmd$`), retriedByProvider: false },
  { id: "write files", method: "POST", path: new RegExp(`${SESSION}/fs/write$`), retriedByProvider: false },
  { id: "snapshot", method: "POST", path: new RegExp(`${SESSION}/snapshot$`), retriedByProvider: false },
  { id: "stop", method: "POST", path: new RegExp(`${SESSION}/stop$`), retriedByProvider: false },
  {
    id: "delete",
    method: "DELETE",
    path: /^\/v2\/sandboxes\/(?!sessions$|snapshots$|drives$)[^/]+$/,
    retriedByProvider: true,
  },
  { id: "extend timeout", method: "POST", path: new RegExp(`${SESSION}/extend-timeout$`), retriedByProvider: false },
  { id: "network policy", method: "POST", path: new RegExp(`${SESSION}/network-policy$`), retriedByProvider: false },
];

/** The call a logged request is, or undefined for one outside the catalogue. */
export function callOf(request: { method: string; path: string }): Call | undefined {
  return CALLS.find((call) => call.method === request.method && call.path.test(request.path));
}

/** The SDK's own fetch makes 1 + 2 attempts; a fault lasting 3 requests outlasts one SDK call's retries. */
export const SDK_ATTEMPTS = 3;
/** Latency past the caller's timeout: core stops waiting after its timeout but never cancels the call. */
export const CALLER_TIMEOUT_MS = 300;
export const LATENCY_MS = 1_200;

export interface Fault {
  id: string;
  rule: Omit<FaultRule, "method" | "path">;
  kind: "failure" | "latency";
}

export const FAULTS: readonly Fault[] = [
  { id: "429 Retry-After", rule: { status: 429, retryAfterS: 1, times: SDK_ATTEMPTS }, kind: "failure" },
  { id: "500", rule: { status: 500, times: SDK_ATTEMPTS }, kind: "failure" },
  { id: "502", rule: { status: 502, times: SDK_ATTEMPTS }, kind: "failure" },
  { id: "reset", rule: { reset: true, times: SDK_ATTEMPTS }, kind: "failure" },
  { id: "commit-then-drop", rule: { dropAfterCommit: true, times: SDK_ATTEMPTS }, kind: "failure" },
  { id: "latency", rule: { delayMs: LATENCY_MS, times: 1 }, kind: "latency" },
];

/**
 * What the contract (README "How the provider behaves", worker-provider reference §2.7) asks of a cell:
 * - `success`: the operation's normal result, after the provider's retries (or the keepalive's next tick),
 *   or late, after the caller's timeout passed;
 * - `plain error`: a retryable error, with nothing left allocated, so core's replay converges;
 * - `WorkerProviderError` / `cleanupIndeterminate`: permanent, or release unproven.
 */
export type Outcome = "success" | "plain error" | "WorkerProviderError" | "cleanupIndeterminate";

export function expectedOutcome(fault: Fault, call: Call, operation: OperationId): Outcome {
  if (fault.kind === "latency") return "success";
  // A failure that outlasts the SDK's attempts: the provider's own retry absorbs it for lookups, lists and
  // deletes, which are safe to repeat.
  if (call.retriedByProvider) return "success";
  // The keepalive a provision or inspect arms: a failed tick is logged and the next one extends.
  if (call.id === "extend timeout") return "success";
  if (operation === "provision" && call.id === "create") {
    // The lost create committed: the retried POST conflicts on the name and the provider adopts it.
    if (fault.rule.dropAfterCommit) return "success";
    // Nothing was created; the provider looked for it, found none, and leaves the replay to core.
    return "plain error";
  }
  // Egress for the gateway could not be set (or its answer was lost): the sandbox is released with proof and
  // the error is retryable, so core's replay starts over.
  if (operation === "provision" && call.id === "network policy") return "plain error";
  throw new Error(`no expected outcome for ${fault.id} × ${call.id} × ${operation}`);
}

/** How core's follow-up ends a cell: a failed call is made again without the fault, then the lease is torn down. */
export function outcomeOf(
  error: unknown,
  isCleanupIndeterminate: (e: unknown) => boolean,
  isProviderError: (e: unknown) => boolean,
): Outcome {
  if (error === undefined) return "success";
  if (isCleanupIndeterminate(error)) return "cleanupIndeterminate";
  if (isProviderError(error)) return "WorkerProviderError";
  return "plain error";
}
