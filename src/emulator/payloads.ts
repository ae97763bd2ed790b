// Wire shapes the SDK's zod validators accept. Optional fields are omitted, never null (only
// `exitCode` and `pagination.next` are nullable); network policies go out in the legacy
// `mode`-based shape even though requests carry the newer `allow`/`subnets` shape.

import { createHash } from "node:crypto";
import type { CommandProcess } from "./executor.js";
import type { SandboxRecord, SessionRecord, SnapshotRecord } from "./registry.js";
import { ROUTE_DOMAIN } from "./route-ca.js";
import { routeSubdomain } from "./route-server.js";

export const SANDBOX_CWD = "/vercel/sandbox";
export const SANDBOX_HOME = "/home/vercel-sandbox";
export const MEMORY_PER_VCPU = 2048;

type Json = Record<string, unknown>;

/** Drops undefined values so optional keys are absent rather than null. */
function compact(obj: Json): Json {
  return Object.fromEntries(Object.entries(obj).filter(([, v]) => v !== undefined));
}

/** Request-shape policy (`{mode}` or `{allow, subnets}`) to the legacy response shape. */
export function legacyPolicy(policy: Json): Json {
  if (policy.mode === "allow-all" || policy.mode === "deny-all") return { mode: policy.mode };
  const out: Json = { mode: "custom" };
  const allow = policy.allow;
  const injectionRules: Json[] = [];
  const forwardRules: Json[] = [];
  if (Array.isArray(allow)) out.allowedDomains = allow.filter((d) => typeof d === "string");
  else if (allow && typeof allow === "object") {
    out.allowedDomains = Object.keys(allow);
    for (const [domain, rules] of Object.entries(allow as Record<string, unknown>)) {
      for (const rule of Array.isArray(rules) ? (rules as Json[]) : []) {
        if (Array.isArray(rule.transform)) {
          const headerNames = (rule.transform as Json[]).flatMap((t) => Object.keys((t.headers as Json) ?? {}));
          injectionRules.push(compact({ domain, headerNames, match: rule.match }));
        } else if (typeof rule.forwardURL === "string") {
          forwardRules.push(compact({ domain, forwardURL: rule.forwardURL, match: rule.match }));
        }
      }
    }
  }
  const subnets = (policy.subnets ?? {}) as Json;
  if (Array.isArray(subnets.allow)) out.allowedCIDRs = subnets.allow;
  if (Array.isArray(subnets.deny)) out.deniedCIDRs = subnets.deny;
  if (injectionRules.length) out.injectionRules = injectionRules;
  if (forwardRules.length) out.forwardRules = forwardRules;
  return out;
}

export function imageRef(image: string): string {
  if (image.includes("@sha256:")) return image;
  const repo = image.replace(/:[^/:]+$/, "");
  return `${repo}@sha256:${createHash("sha256").update(image).digest("hex")}`;
}

export function routesOf(sandbox: SandboxRecord): Json[] {
  return sandbox.ports.map((port) => {
    const subdomain = routeSubdomain(sandbox.name, port);
    // The URL the SDK's domain() builds from the subdomain: served by the emulator's route server.
    return { port, subdomain, url: `https://${subdomain}.${ROUTE_DOMAIN}` };
  });
}

export function sessionPayload(s: SessionRecord): Json {
  return compact({
    id: s.id,
    memory: s.memory,
    vcpus: s.vcpus,
    region: s.region,
    runtime: s.runtime,
    timeout: s.timeout,
    status: s.status,
    requestedAt: s.requestedAt,
    startedAt: s.startedAt,
    requestedStopAt: s.requestedStopAt,
    stoppedAt: s.stoppedAt,
    duration: s.stoppedAt !== undefined && s.startedAt !== undefined ? s.stoppedAt - s.startedAt : undefined,
    sourceSnapshotId: s.sourceSnapshotId,
    snapshottedAt: s.snapshottedAt,
    createdAt: s.createdAt,
    cwd: SANDBOX_CWD,
    updatedAt: s.updatedAt,
    networkPolicy: legacyPolicy(s.networkPolicy),
  });
}

export function sandboxPayload(sb: SandboxRecord, session: SessionRecord | undefined): Json {
  const running = session?.status === "running";
  return compact({
    name: sb.name,
    persistent: sb.persistent,
    region: sb.region,
    failoverRegions: sb.failoverRegions,
    vcpus: sb.vcpus,
    memory: sb.vcpus * MEMORY_PER_VCPU,
    runtime: sb.runtime,
    image: sb.image,
    timeout: sb.timeout,
    status: session?.status ?? "stopped",
    createdAt: sb.createdAt,
    updatedAt: sb.updatedAt,
    statusUpdatedAt: sb.statusUpdatedAt,
    expiresAt: running && session?.startedAt !== undefined ? session.startedAt + session.timeout : undefined,
    currentSessionId: sb.currentSessionId,
    currentSnapshotId: sb.currentSnapshotId,
    cwd: SANDBOX_CWD,
    networkPolicy: legacyPolicy(sb.networkPolicy),
    tags: sb.tags,
    snapshotExpiration: sb.snapshotExpiration,
    keepLastSnapshots: sb.keepLastSnapshots,
    mounts: sb.mounts,
  });
}

/** An expired snapshot is gone on Vercel as a deleted one is, so it reports `deleted` too. */
export function snapshotStatus(s: SnapshotRecord, now = Date.now()): SnapshotRecord["status"] {
  return s.status === "created" && s.expiresAt !== undefined && s.expiresAt <= now ? "deleted" : s.status;
}

export function snapshotPayload(s: SnapshotRecord): Json {
  return compact({
    id: s.id,
    sourceSessionId: s.sourceSessionId,
    region: s.region,
    status: snapshotStatus(s),
    sizeBytes: s.sizeBytes,
    createdAt: s.createdAt,
    updatedAt: s.updatedAt,
    expiresAt: s.expiresAt,
    parentId: s.parentId,
    // The value Vercel gives a stop's snapshot is not documented: left out rather than made up.
    creationMethod: s.atStop ? undefined : "manual",
  });
}

export function commandPayload(c: CommandProcess): Json {
  return compact({
    id: c.id,
    name: c.name,
    args: c.args,
    cwd: c.cwd,
    sessionId: c.sessionId,
    startedAt: c.startedAt,
    exitCode: c.exitCode,
    durationMs: c.exitCode === null ? undefined : (c.endedAt ?? Date.now()) - c.startedAt,
  });
}
