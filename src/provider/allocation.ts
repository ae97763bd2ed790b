// Pure identity decisions: the lease id, sandbox name and ownership tags of an operation. Core calls
// resolveAllocation before anything exists (and again after restarts), so these are hashes of stable inputs
// only: the gateway scope and the operation id. The sandbox name is the lease, which is what makes replay,
// lost-response recovery and concurrent provisions converge on one sandbox: Vercel names are unique.
import { createHash } from "node:crypto";

export const LEASE_PREFIX = "vsb_";
const NAME_PREFIX = "openclaw-";
const LEASE_PATTERN = /^vsb_([0-9a-f]{24})$/;
/** What OpenClaw 2026.9.2 mints. Only the tag uses it; any other id is hashed, so a new format still works. */
const V2_OPERATION = /^provision:v2:([0-9a-f]{16})[0-9a-f]{48}$/;
const DEFAULT_SCOPE = "default";

export const TAG_SCOPE = "openclaw-scope";
export const TAG_PROFILE = "openclaw-profile";
export const TAG_OPERATION = "openclaw-op";

export interface Allocation {
  leaseId: string;
  sandboxName: string;
  scope: string;
  operationTag: string;
}

function sha256(...parts: string[]): string {
  return createHash("sha256").update(parts.join("\0")).digest("hex");
}

export class AllocationError extends Error {
  override readonly name = "AllocationError";
}

/** The scope a lease and its tags use when neither the profile nor the plugin names one. */
export function effectiveScope(scope: string | undefined): string {
  return scope ?? DEFAULT_SCOPE;
}

/**
 * The lease of an operation: a hash of the scope and the whole operation id, whatever its format. The hash
 * input is unchanged since the first release, so sandboxes created then are still adopted on replay.
 */
export function allocate(scope: string | undefined, operationId: string): Allocation {
  if (typeof operationId !== "string" || operationId.length === 0) {
    throw new AllocationError("operation id is empty; refusing to derive a lease from it");
  }
  const scopeName = effectiveScope(scope);
  const hex = sha256("openclaw:vercel-sandbox-lease:v1", scopeName, operationId).slice(0, 24);
  return {
    leaseId: `${LEASE_PREFIX}${hex}`,
    sandboxName: `${NAME_PREFIX}${hex}`,
    scope: scopeName,
    operationTag: operationTagOf(operationId),
  };
}

/** A v2 id's own first 16 hex digits (greppable in the gateway's records); a hash prefix for any other id. */
function operationTagOf(operationId: string): string {
  return V2_OPERATION.exec(operationId)?.[1] ?? sha256("openclaw:vercel-sandbox-op:v1", operationId).slice(0, 16);
}

/** The sandbox a lease names; throws on anything that is not one of our lease ids. */
export function sandboxNameOf(leaseId: string): string {
  const match = LEASE_PATTERN.exec(leaseId);
  if (!match) throw new AllocationError("lease id is not a vercel-sandbox lease (expected vsb_<24 hex>)");
  return `${NAME_PREFIX}${match[1]}`;
}

export function leaseIdOf(sandboxName: string): string | undefined {
  const hex = sandboxName.startsWith(NAME_PREFIX) ? sandboxName.slice(NAME_PREFIX.length) : "";
  return /^[0-9a-f]{24}$/.test(hex) ? `${LEASE_PREFIX}${hex}` : undefined;
}

/** A short, stable fingerprint of the frozen settings, so a sandbox shows which profile shape made it. */
export function profileFingerprint(settings: unknown): string {
  return sha256("openclaw:vercel-sandbox-profile:v1", canonicalJson(settings)).slice(0, 12);
}

function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(",")}]`;
  if (value && typeof value === "object") {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : 1));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(",")}}`;
  }
  return JSON.stringify(value ?? null);
}

export function ownershipTags(allocation: Allocation, settings: unknown, userTags: Record<string, string>) {
  return {
    ...userTags,
    [TAG_SCOPE]: allocation.scope,
    [TAG_PROFILE]: profileFingerprint(settings),
    [TAG_OPERATION]: allocation.operationTag,
  };
}
