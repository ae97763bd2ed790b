// The pure checks of `openclaw vercel-sandbox doctor`: each turns facts (the config, a Node version, a parsed
// profile) into a verdict with a message and, unless it passed, the remedy. The I/O checks (credentials,
// Vercel, the gateway) are in doctor.ts.
import { egressPolicy, NODE_ENGINES_TEXT, satisfiesEngines } from "../provider/index.js";
import { durationMs, type ProfileSettings } from "../settings/index.js";
import type { EnrollmentOrigin } from "./origin.js";
import { type ProfileEntry, settingsPath } from "./profiles.js";

export type CheckStatus = "ok" | "warn" | "fail" | "skip";

export interface Check {
  id: string;
  /** What was checked, e.g. a profile id. */
  subject?: string;
  status: CheckStatus;
  message: string;
  /** What to do next; present on every warn and fail. */
  remedy?: string;
}

const CLOUD_WORKERS_DOC = "docs/gateway/cloud-workers.md, “For a loopback Gateway behind public HTTPS ingress”";

export function checkNode(version: string): Check {
  if (satisfiesEngines(version)) {
    return { id: "node", status: "ok", message: `Node ${version} satisfies OpenClaw 2026.9.2 (${NODE_ENGINES_TEXT})` };
  }
  return {
    id: "node",
    status: "fail",
    message: `Node ${version} does not satisfy OpenClaw 2026.9.2's engines (${NODE_ENGINES_TEXT})`,
    remedy: "Install Node 24 (24.15.0 or newer) and run the gateway and this CLI with it",
  };
}

export function checkProfiles(profiles: readonly ProfileEntry[]): Check[] {
  if (profiles.length === 0) {
    return [
      {
        id: "profiles",
        status: "fail",
        message: "no cloudWorkers profile uses provider vercel-sandbox",
        remedy:
          'Add one, e.g. `openclaw config patch` with {cloudWorkers: {profiles: {vsb: {provider: "vercel-sandbox", settings: {}}}}}',
      },
    ];
  }
  return profiles.map((p) =>
    p.ok
      ? {
          id: "settings",
          subject: p.id,
          status: "ok",
          message: `valid (${p.settings.backend} backend, ${p.settings.runtime}, ${p.settings.vcpus} vCPU, scope ${p.scope})`,
        }
      : {
          id: "settings",
          subject: p.id,
          status: "fail",
          message: p.error.message,
          remedy: `Fix ${settingsPath(p.id, p.error.key)} in the OpenClaw config, then restart the gateway`,
        },
  );
}

/** Whether the workers of these backends can enroll through the origin the config gives. */
export function checkOrigin(origin: EnrollmentOrigin, backends: ReadonlySet<ProfileSettings["backend"]>): Check {
  const base = { id: "enrollment-origin" };
  const where = origin.url ? `${origin.url} (from ${origin.source})` : origin.source;
  if (backends.size === 0) return { ...base, status: "skip", message: "no valid vercel-sandbox profile" };
  if (origin.problem) {
    return {
      ...base,
      status: "fail",
      message: origin.problem,
      remedy: "Set gateway.publicOrigin to the bare HTTPS origin of your ingress, e.g. https://gateway.example.com",
    };
  }
  if (origin.reach === "loopback") {
    return {
      ...base,
      status: "fail",
      message: `the gateway is reachable only on loopback (${where}): a worker VM cannot reach it to enroll`,
      remedy: backends.has("vercel")
        ? "Put public HTTPS ingress in front of the gateway (a reverse proxy, cloudflared or Tailscale Funnel), set " +
          "gateway.publicOrigin to its origin and gateway.trustedProxies to the proxy's address; see " +
          CLOUD_WORKERS_DOC
        : "For the embedded backend, bind the gateway to a non-loopback address with TLS (gateway.bind=lan and " +
          "gateway.tls), or set gateway.publicOrigin",
    };
  }
  if (origin.reach !== "public" && backends.has("vercel")) {
    return {
      ...base,
      status: "fail",
      message: `workers would enroll through ${where}, a ${origin.reach} address a Vercel sandbox cannot reach`,
      remedy: `Set gateway.publicOrigin to a public HTTPS origin that forwards to the gateway; see ${CLOUD_WORKERS_DOC}`,
    };
  }
  if (origin.url?.startsWith("http://") && backends.has("vercel")) {
    return {
      ...base,
      status: "warn",
      message: `workers would enroll through ${where} over plain HTTP across the internet`,
      remedy: "Serve the public origin over HTTPS and set gateway.publicOrigin to its https:// origin",
    };
  }
  return { ...base, status: "ok", message: `workers enroll through ${where}` };
}

function hostsOf(policy: ReturnType<typeof egressPolicy>): string {
  if (typeof policy === "string") return policy;
  const names = Array.isArray(policy.allow) ? policy.allow : Object.keys(policy.allow ?? {});
  return [...names, ...(policy.subnets?.allow ?? [])].join(", ");
}

/** What a worker of this profile may reach at each stage, from src/provider/policy.ts. */
export function checkEgress(profileId: string, settings: ProfileSettings, gatewayHost: string | undefined): Check {
  const base = { id: "egress", subject: profileId };
  if (settings.networkPolicy === "allow-all") {
    return {
      ...base,
      status: "warn",
      message: "networkPolicy is allow-all: workers can reach any host, including your internal services",
      remedy: `Replace it with { allow: [...] } listing what agents need (${settingsPath(profileId, "networkPolicy")})`,
    };
  }
  const host = gatewayHost ?? "<gateway host>";
  const bootstrap = hostsOf(egressPolicy(settings, [host], "bootstrap"));
  const enrolled = hostsOf(egressPolicy(settings, [host], "enrolled"));
  const extra = settings.networkPolicy.allow.length + settings.networkPolicy.allowCidrs.length;
  return {
    ...base,
    status: "ok",
    message:
      `deny-by-default: bootstrap may reach ${bootstrap}; once enrolled only ${enrolled}` +
      (extra === 0 ? " (agents cannot install packages or clone repositories from the worker)" : ""),
  };
}

/** Worst first: the exit code and the summary line follow it. */
export function worst(checks: readonly Check[]): CheckStatus {
  for (const status of ["fail", "warn", "ok"] as const) if (checks.some((c) => c.status === status)) return status;
  return "skip";
}

/** The value at `keys` in a parsed config, if every step is an object. */
function valueAt(config: unknown, ...keys: string[]): unknown {
  let value = config;
  for (const key of keys) {
    if (typeof value !== "object" || value === null) return undefined;
    value = (value as Record<string, unknown>)[key];
  }
  return value;
}

/** OpenClaw's heartbeat cadence when `agents.defaults.heartbeat.every` is unset. */
const DEFAULT_HEARTBEAT = "30m";

/**
 * The agent heartbeat against sleep. OpenClaw runs it as a cron job (every 30 minutes unless configured), so with
 * scheduled wake the host wakes VM1 for every beat, and without it a sleeping VM1 skips the beats.
 */
export function checkHeartbeat(config: unknown): Check {
  const base = { id: "heartbeat" };
  const suspend = valueAt(config, "plugins", "entries", "vercel-sandbox", "config", "suspend");
  if (valueAt(suspend, "notifyUrl") === undefined) {
    return { ...base, status: "skip", message: "sleep is not configured (no suspend.notifyUrl)" };
  }
  const cadenceOf = (agent: unknown) => {
    const every = valueAt(agent, "heartbeat", "every");
    return typeof every === "string" || typeof every === "number" ? every : undefined;
  };
  const configured = cadenceOf(valueAt(config, "agents", "defaults"));
  const fallback = configured ?? DEFAULT_HEARTBEAT;
  // When an agent entry has a heartbeat block, only those agents beat (each block merges over the defaults).
  const entries = Object.entries(valueAt(config, "agents", "entries") ?? {}).filter(
    ([, agent]) => valueAt(agent, "heartbeat") !== undefined,
  );
  const cadences =
    entries.length === 0
      ? [{ who: "", every: fallback }]
      : entries.map(([id, agent]) => ({ who: ` (agent ${id})`, every: cadenceOf(agent) ?? fallback }));
  const beating = cadences.filter(({ every }) => durationMs(every) !== 0);
  if (beating.length === 0) return { ...base, status: "ok", message: "agent heartbeat off (every 0m)" };
  const cadence = `the agent heartbeat runs every ${beating.map(({ who, every }) => `${every}${who}`).join(", ")}${configured === undefined && entries.length === 0 ? " (OpenClaw's default)" : ""}`;
  const remedy =
    "Turn it off where VM1 should sleep (`openclaw config set agents.defaults.heartbeat.every 0m`) or lengthen it; " +
    "a per-agent agents.entries.<id>.heartbeat.every overrides it";
  const message =
    valueAt(suspend, "wakeLead") === undefined
      ? `${cadence}: a sleeping VM1 skips it (suspend.wakeLead is unset, so no cron run wakes VM1)`
      : `${cadence}: scheduled wake (suspend.wakeLead) wakes VM1 for every beat, so VM1 never sleeps longer`;
  return { ...base, status: "warn", message, remedy };
}
