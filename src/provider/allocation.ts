// Pure identity decisions: the lease id, sandbox name and ownership tags of an operation. Core calls
// resolveAllocation before anything exists (and again after restarts), so these are hashes of stable inputs
// only: the gateway scope and the operation id. The sandbox name is the lease, which is what makes replay,
// lost-response recovery and concurrent provisions converge on one sandbox: Vercel names are unique.
import { createHash } from "node:crypto";

export const LEASE_PREFIX = "vsb_";
const NAME_PREFIX = "openclaw-";
const LEASE_PATTERN = /^vsb_([0-9a-f]{24})$/;
/** The legacy `provision:<hex>` form is refused, as OpenClaw's own providers do. */
const OPERATION_PATTERN = /^provision:v2:[0-9a-f]{64}$/;
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

export function allocate(scope: string | undefined, operationId: string): Allocation {
  if (!OPERATION_PATTERN.test(operationId)) {
    throw new AllocationError("operation id must look like provision:v2:<64 hex>; refusing to derive a lease from it");
  }
  const scopeName = effectiveScope(scope);
  const hex = sha256("openclaw:vercel-sandbox-lease:v1", scopeName, operationId).slice(0, 24);
  return {
    leaseId: `${LEASE_PREFIX}${hex}`,
    sandboxName: `${NAME_PREFIX}${hex}`,
    scope: scopeName,
    operationTag: operationId.slice("provision:v2:".length, "provision:v2:".length + 16),
  };
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
