// Seed 000's topology as data: VM1's gateway config (pure), and the fixed names and numbers of the main job.
// VM1 runs the gateway on loopback; the outside (the host, VM2's node) reaches it only through VM1's exposed
// port, https://<vm1>-<port>.vercel.run, which is also the gateway's public origin for node enrollment.
import type { NetworkPolicy } from "@vercel/sandbox";
import { CODEX_GATEWAY_VERSION, codexConfig } from "./codex-config.js";
import { scriptedModelConfig } from "./model.js";

export const OPENCLAW_VERSION = "2026.9.2";

/**
 * How the agent's commands reach VM2: OpenClaw's own agent by `worker-turn` on the pinned gateway (`npm start`), or
 * Codex by `remote-exec` on the newest gateway with a matching Codex plugin (`npm start -- --codex`).
 */
export type AgentMode = "worker-turn" | "codex";

export function gatewayVersionFor(mode: AgentMode): string {
  return mode === "codex" ? CODEX_GATEWAY_VERSION : OPENCLAW_VERSION;
}
export const GATEWAY_PORT = 18789;
export const PACKAGE_REGISTRY = "registry.npmjs.org";
export const SESSION_KEY = "agent:main:main-job";

export interface Timers {
  /** The idle clock's interval (45m in production; shortened for the demo). */
  idleAfter: string;
  pollInterval: string;
}

export const DEMO_TIMERS: Timers = { idleAfter: "20s", pollInterval: "2s" };

/**
 * The gateway's `suspend.wakeLead`: it wants to be awake this long before a job, and will not sleep so close to
 * one. It covers the emulator's wake (15-35 s), so a gateway the host woke does not idle back to sleep before its job.
 */
export const WAKE_LEAD = "45s";

export interface GatewayConfigInput {
  port: number;
  publicOrigin: string;
  modelBaseUrl: string;
  /** The Vercel API base the plugin uses (the API front here; omitted on Vercel). */
  apiUrl?: string;
  teamId: string;
  projectId: string;
  notifyUrl: string;
  timers: Timers;
  logFile: string;
  /** Default: worker-turn. */
  mode?: AgentMode;
}

/** The base config written before the plugin is installed: a local gateway with token auth from the environment. */
export function baseConfig(input: Pick<GatewayConfigInput, "port" | "publicOrigin" | "logFile">) {
  return {
    gateway: {
      mode: "local",
      bind: "loopback",
      port: input.port,
      auth: { mode: "token" },
      publicOrigin: input.publicOrigin,
      http: { endpoints: { chatCompletions: { enabled: true } } },
      nodes: { pairing: { sshVerify: false } },
    },
    logging: { file: input.logFile },
  };
}

/** What the main job adds after the plugin is installed: model, worker profile, idle clock. */
export function jobConfigPatch(input: GatewayConfigInput) {
  const settings = {
    ...(input.apiUrl ? { apiUrl: input.apiUrl } : {}),
    tokenEnv: "VERCEL_TOKEN",
    teamId: input.teamId,
    projectId: input.projectId,
    runtime: "node24",
    timeout: "30m",
    // VM2 gets gateway-only egress once enrolled (the registry only while it bootstraps).
    networkPolicy: {},
  };
  const suspend = {
    idleAfter: input.timers.idleAfter,
    pollInterval: input.timers.pollInterval,
    renotifyAfter: "30s",
    notifyUrl: input.notifyUrl,
    secretEnv: "VSB_NOTIFY_SECRET",
    // Scheduled wake: cron run times go to the host, which wakes VM1 this long before a job (plus its own lead).
    wakeLead: WAKE_LEAD,
  };
  // No model key on VM1: its firewall adds it (vm1NetworkPolicy).
  const model = scriptedModelConfig(input.modelBaseUrl, undefined, { key: "firewall" }) as {
    models: { providers: Record<string, unknown> };
    agents: { defaults: Record<string, unknown> };
  };
  // Codex mode: Codex owns the agent's turns (its app-server on VM1 sends them to the same scripted model).
  const codex = input.mode === "codex" ? codexConfig(input.modelBaseUrl) : undefined;
  // The gateway's own recurring jobs are off. Each is a cron job the host wakes VM1 for (the heartbeat every 30
  // minutes, the dreaming promotion daily at 03:00, the skill review weekly): one due between the sleep and the
  // job's would be VM1's first wake, and their model turns are none the scripted model answers.
  return {
    ...(codex ? { gateway: codex.gateway } : {}),
    models: { ...model.models, providers: { ...model.models.providers, ...codex?.models.providers } },
    agents: { defaults: { ...model.agents.defaults, ...codex?.agents.defaults, heartbeat: { every: "0m" } } },
    skills: { workshop: { autonomous: { mode: "off" } } },
    // Codex mode's gateway (2026.9.4) keeps a ready worker per project for the next session by default: the job's
    // one conversation has one VM2, as seed 000's does (and the machine builds one VM2 at a time).
    cloudWorkers: {
      profiles: { vsb: { provider: "vercel-sandbox", settings, ...(codex ? { readyWorkers: 0 } : {}) } },
    },
    plugins: {
      entries: {
        "vercel-sandbox": { config: { suspend } },
        "memory-core": { config: { dreaming: { enabled: false } } },
        ...codex?.plugins.entries,
      },
    },
  };
}

export interface Vm1Egress {
  /** Where the API front and the host answer. */
  hostAddress: string;
  /** The scripted model's base URL (…/v1), on an address of its own. */
  modelBaseUrl: string;
  modelKey: string;
}

/**
 * VM1's network policy, at create and at every wake: the registry and the host address as plain entries (their
 * traffic passes untouched, the API front's TLS included), and the model's host with one request rule that sets
 * `Authorization: Bearer <key>` on every request under the model's base path. The firewall adds the key after
 * VM1's request has left it, so the key is in no file, environment or checkpoint of VM1.
 */
export function vm1NetworkPolicy(egress: Vm1Egress): NetworkPolicy {
  const model = new URL(egress.modelBaseUrl);
  const rule = {
    match: { path: { startsWith: `${model.pathname.replace(/\/+$/, "")}/` } },
    transform: [{ headers: { authorization: `Bearer ${egress.modelKey}` } }],
  };
  return { allow: { [PACKAGE_REGISTRY]: [], [egress.hostAddress]: [], [model.hostname]: [rule] } };
}
