// The OpenClaw plugin entry: registers the `vercel-sandbox` worker provider, the service that stops its
// keepalives and the one that stops the embedded emulator (if a profile started it) when the gateway stops; with a `suspend`
// block in its config, also the idle clock, resident timer and sleep/wake routes (src/suspend). Registration is
// side-effect free (no timers, no requests, no emulator): it also runs in the gateway's read-only discovery
// modes.
import { createHash } from "node:crypto";
import { Value } from "@sinclair/typebox/value";
import { definePluginEntry } from "openclaw/plugin-sdk/plugin-entry";
import { registerVercelSandboxCli } from "./cli/index.js";
import { type PluginConfig, PluginConfigSchema } from "./config.js";
import type { LocalSandboxApi } from "./emulator/index.js";
import { registerStatusMethod } from "./gateway-status/index.js";
import {
  createVercelSandboxProvider,
  type EmbeddedBackend,
  type LeaseCap,
  makeRoomForTurn,
  type Reclaimer,
  WorkerCap,
  withWorkerCap,
} from "./provider/index.js";
import { parseSettings } from "./settings/index.js";
import { capConfigured, registerSuspend, registerWorkerCapRoutes, type SuspendView } from "./suspend/index.js";

export const PLUGIN_ID = "vercel-sandbox";

/** The longest `capWait` (30 min) and a reclaim's own bound (10 min), with a margin: then core goes on without us. */
const TURN_ROOM_HOOK_TIMEOUT_MS = 45 * 60_000;

function defaultScope(stateDir: string): string {
  return `gw-${createHash("sha256").update(stateDir).digest("hex").slice(0, 8)}`;
}

/**
 * The emulator behind `backend: "embedded"` profiles: loaded and started on first use (a Vercel-backed
 * gateway never imports it), shared by every later use, stopped by `close`. A failed start is not cached,
 * so fixing the host (e.g. running as root) and retrying works without a gateway restart.
 */
function embeddedEmulator() {
  let started: Promise<LocalSandboxApi> | undefined;
  return {
    async backend(): Promise<EmbeddedBackend> {
      started ??= import("./emulator/index.js")
        .then(({ startLocalSandboxApi }) => startLocalSandboxApi())
        .catch((error: unknown) => {
          started = undefined;
          throw error;
        });
      const api = await started;
      return { credentials: api.credentials, fetch: api.fetch };
    },
    async close(): Promise<void> {
      const running = started;
      started = undefined;
      if (running) await (await running.catch(() => undefined))?.close();
    },
  };
}

/**
 * A profile's cap (`maxWorkers`) and how long a turn waits at it (`capWait`); none for a profile without one, or an
 * invalid profile (the provider refuses it with the key at fault).
 */
function capOfSettings(settings: unknown): LeaseCap | undefined {
  try {
    const parsed = parseSettings(settings);
    return parsed.maxWorkers === undefined ? undefined : { maxWorkers: parsed.maxWorkers, waitMs: parsed.capWaitMs };
  } catch {
    return undefined;
  }
}

/** The cap of the configured profile `profileId` when it is one of ours (capOfSettings). */
function capOfProfile(config: unknown, providerId: string, profileId: string): LeaseCap | undefined {
  const profiles = (
    config as { cloudWorkers?: { profiles?: Record<string, { provider?: unknown; settings?: unknown }> } }
  )?.cloudWorkers?.profiles;
  const profile = profiles && Object.hasOwn(profiles, profileId) ? profiles[profileId] : undefined;
  return profile?.provider === providerId ? capOfSettings(profile.settings ?? {}) : undefined;
}

export default definePluginEntry({
  id: PLUGIN_ID,
  name: "Vercel Sandbox",
  description: "Runs OpenClaw cloud workers on Vercel Sandbox",
  register(api) {
    // First, and alone in "cli-metadata" mode: OpenClaw registers plugins without a runtime to find CLI owners.
    registerVercelSandboxCli(api, { defaultScope });
    if (api.registrationMode === "cli-metadata") return;
    const config = (api.pluginConfig ?? {}) as PluginConfig;
    if (!Value.Check(PluginConfigSchema, config)) {
      api.logger.warn("vercel-sandbox: plugin config is invalid; using defaults");
    }
    const stateDir = api.runtime.state.resolveStateDir(process.env);
    const embedded = embeddedEmulator();
    let suspend: SuspendView | undefined;
    let reclaimer: Reclaimer | undefined;
    const logger = { info: (m: string) => api.logger.info(m), warn: (m: string) => api.logger.warn(m) };
    // `maxWorkers` (issue 23): placements pass the cap first; at the cap an idle worker is reclaimed through the gateway.
    const cap = new WorkerCap(() => reclaimer, logger);
    const inner = createVercelSandboxProvider({
      logger: { info: (m) => api.logger.info(m), warn: (m) => api.logger.warn(m) },
      scope: config.scope ?? defaultScope(stateDir),
      stateDir,
      embeddedBackend: () => embedded.backend(),
      // A worker being provisioned is activity: a dispatch places the session before any turn runs.
      activity: {
        provisionStarted: (leaseId) => suspend?.provisionStarted(leaseId),
        provisionEnded: (leaseId) => suspend?.provisionEnded(leaseId),
      },
    });
    const provider = withWorkerCap(inner, {
      cap,
      capOf: capOfSettings,
      activity: {
        provisionStarted: (key) => suspend?.provisionStarted(key),
        provisionEnded: (key) => suspend?.provisionEnded(key),
      },
    });
    api.registerWorkerProvider(provider);
    // Services stop in the reverse order of registration: the keepalives first, then the emulator they may use.
    api.registerService({ id: "vercel-sandbox-emulator", start() {}, stop: () => embedded.close() });
    api.registerService({ id: "vercel-sandbox-keepalive", start() {}, stop: () => provider.dispose() });
    // Sleep and wake for small hosts: only when configured (it opens HTTP routes and may notify a host).
    suspend = config.suspend ? registerSuspend(api, config.suspend, provider.id) : undefined;
    if (capConfigured(api.config, provider.id)) {
      const turnRoom = {
        providerId: provider.id,
        cap,
        reclaimer: () => reclaimer,
        capOf: (profileId: string) => capOfProfile(api.config, provider.id, profileId),
        logger,
      };
      // A host's own call (`POST …/workers/room`) before it places a session or hands over a message no hook sees
      // (sessions.dispatch, the HTTP API): the same wait, inside an HTTP request, outside any placement.
      reclaimer = registerWorkerCapRoutes(api, provider.id, async (request) => {
        if ("session" in request) return makeRoomForTurn(request.session, turnRoom);
        const room = turnRoom.capOf(request.profileId);
        return room ? cap.makeRoomAhead(room.maxWorkers, room.waitMs) : "skipped";
      });
      // Before a turn is placed (core awaits this hook outside any placement): room at the cap for a conversation
      // whose worker was reclaimed, so its message waits for a worker instead of being refused (issue 47). After the
      // suspend fence (higher priority first): a fenced message is refused before anything is reclaimed for it.
      api.on(
        "before_dispatch",
        async (event) => {
          await makeRoomForTurn(event.sessionKey, turnRoom);
          return undefined;
        },
        { priority: -10, timeoutMs: TURN_ROOM_HOOK_TIMEOUT_MS },
      );
    }
    registerStatusMethod(api, {
      keepaliveLeases: () => provider.keepaliveLeases(),
      idle: suspend?.idle,
      cap: () => cap.snapshot(),
    });
  },
});
