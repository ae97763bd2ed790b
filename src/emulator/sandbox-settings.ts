// The settings a create, fork or patch body carries, read and validated before any side effect so
// a bad request is a 400 and never a half-made sandbox. Pure: bodies in, values out.
import { mountsOf } from "./drives.js";
import { checkRules, RuleShapeError } from "./egress-rules.js";
import { badRequest, field } from "./http.js";
import { checkedRegions } from "./regions.js";
import type { SandboxRecord } from "./registry.js";

const DEFAULT_TIMEOUT = 5 * 60 * 1000;
const DEFAULT_REGION = "iad1";
/** `/v2/sandboxes/<these>` are fixed API paths, so a sandbox of that name could never be read back. */
const RESERVED_NAMES = new Set(["sessions", "snapshots", "drives"]);

type Body = Record<string, unknown>;

export function policyOf(body: Body): Record<string, unknown> | undefined {
  const p = body.networkPolicy;
  if (p === undefined || p === null) return undefined;
  if (p === "allow-all" || p === "deny-all") return { mode: p };
  if (typeof p !== "object" || Array.isArray(p)) throw badRequest("`networkPolicy` must be an object");
  checkedRules(p as Record<string, unknown>);
  return p as Record<string, unknown>;
}

/** A policy whose request rules Vercel would refuse is a 400 before anything is stored. */
export function checkedRules(policy: Record<string, unknown>): void {
  try {
    checkRules(policy);
  } catch (error) {
    if (error instanceof RuleShapeError) throw badRequest(error.message);
    throw error;
  }
}

export function portsOf(body: Body): number[] | undefined {
  const v = body.ports;
  if (v === undefined || v === null) return undefined;
  if (!Array.isArray(v) || v.length > 15 || v.some((p) => !Number.isInteger(p) || p < 1 || p > 65535)) {
    throw badRequest("`ports` must be at most 15 port numbers");
  }
  return v as number[];
}

export function tagsOf(body: Body): Record<string, string> | undefined {
  const tags = field.stringRecord(body, "tags");
  if (tags && Object.keys(tags).length > 5) throw badRequest("At most 5 tags are allowed");
  return tags;
}

export function vcpusOf(body: Body): number | undefined {
  const resources = field.object(body, "resources");
  return resources ? field.number(resources, "vcpus") : undefined;
}

/**
 * Secure Compute networks (`networkId`, SDK 3.5) do not exist here: a sandbox that silently lacked
 * its private network would reach what it must not, or not reach what it needs, so refuse it.
 */
export function refuseNetworkId(body: Body): void {
  if (body.networkId === undefined || body.networkId === null) return;
  throw badRequest(
    "`networkId` (a Secure Compute private network) is not available in the local Vercel Sandbox emulator",
  );
}

/**
 * The region pair after applying a body to `current` (create: none; fork: the source; update: the sandbox);
 * conflicting pairs are a 400. With a `current`, a pair the body changes is checked whole (regions.ts).
 */
export function regionsOf(
  body: Body,
  current?: Pick<SandboxRecord, "region" | "failoverRegions">,
  /** Check the resulting pair whole even when the body changes neither side (a fork makes a new pair). */
  whole = false,
) {
  const named = field.string(body, "region");
  const failoverRegions = field.stringArray(body, "failoverRegions");
  const changed = named !== undefined || failoverRegions !== undefined;
  return checkedRegions({
    region: named ?? current?.region ?? DEFAULT_REGION,
    failoverRegions: failoverRegions ?? current?.failoverRegions,
    regionNamed: named !== undefined || (current !== undefined && (changed || whole)),
  });
}

/** The settings shared by create and fork, validated; `base` supplies fork's inherited values. */
export function settingsOf(body: Body, base?: SandboxRecord) {
  refuseNetworkId(body);
  const mounts = mountsOf(body);
  return {
    mounts: mounts && Object.keys(mounts).length > 0 ? mounts : undefined,
    persistent: field.boolean(body, "persistent") ?? base?.persistent ?? true,
    ...regionsOf(body, base, base !== undefined),
    vcpus: vcpusOf(body) ?? base?.vcpus ?? 2,
    timeout: field.number(body, "timeout") ?? base?.timeout ?? DEFAULT_TIMEOUT,
    ports: portsOf(body) ?? base?.ports ?? [],
    env: field.stringRecord(body, "env") ?? base?.env ?? {},
    tags: tagsOf(body) ?? base?.tags,
    networkPolicy: policyOf(body) ?? base?.networkPolicy ?? { mode: "allow-all" },
    snapshotExpiration: field.number(body, "snapshotExpiration") ?? base?.snapshotExpiration,
    keepLastSnapshots: field.object(body, "keepLastSnapshots") ?? base?.keepLastSnapshots,
  };
}

export type SandboxSettings = ReturnType<typeof settingsOf>;

/** A valid, non-reserved sandbox name (the body's, or a generated one). */
export function nameOf(body: Body, generated: () => string): string {
  const name = field.string(body, "name") ?? generated();
  if (!/^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/.test(name)) throw badRequest(`Invalid sandbox name: ${name}`);
  if (RESERVED_NAMES.has(name)) throw badRequest(`\`${name}\` is reserved by the API's own paths; choose another name`);
  return name;
}
