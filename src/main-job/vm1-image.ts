// VM1's image for reruns (issue 21), two layers each built in a builder sandbox of its own: the gateway layer (the
// mode's gateway from the registry) and on it the plugin layer (the base config, this checkout's packed plugin
// installed as a user installs it, and in Codex mode the Codex plugin), each captured before any gateway ran
// there, so before any token, setup code or model key could reach it: a builder never gets a secret, and its
// firewall allows the registry alone. VM1 is then created from the image, told this run's API front CA and public
// origin, and configured and started as before (every secret only in the gateway command's environment).

import { randomBytes } from "node:crypto";
import { Sandbox } from "@vercel/sandbox";
import { installCodex } from "./codex.js";
import { CODEX_PLUGIN_SPEC } from "./codex-config.js";
import type { Progress } from "./report.js";
import { type GatewayImageInputs, type PluginImageInputs, sha256, VM1_IMAGE_FORMAT } from "./reuse.js";
import type { Services } from "./services.js";
import { type AgentMode, baseConfig, GATEWAY_PORT, gatewayVersionFor, PACKAGE_REGISTRY } from "./topology.js";
import * as vm1 from "./vm1.js";

export const VM1_RUNTIME = "node24";
export const VM1_LOG_FILE = `${vm1.ROOT}/logs/openclaw.log`;
/** How long a cached image lives on the emulator unless a rerun replaces it. */
export const IMAGE_TTL_MS = 14 * 24 * 3600 * 1000;

/** What VM1's gateway layer is made of (reuse.ts keys it). */
export function gatewayImageInputs(mode: AgentMode): GatewayImageInputs {
  return { format: VM1_IMAGE_FORMAT, openclaw: gatewayVersionFor(mode), runtime: VM1_RUNTIME, node: process.version };
}

/** What VM1's plugin layer is made of, on the gateway layer of `gatewayKey`. */
export function pluginImageInputs(gatewayKey: string, plugin: Buffer, mode: AgentMode): PluginImageInputs {
  const config = baseConfig({ port: GATEWAY_PORT, publicOrigin: "", logFile: VM1_LOG_FILE });
  return {
    gateway: gatewayKey,
    plugin: sha256(plugin),
    baseConfig: sha256(JSON.stringify(config)),
    codex: mode === "codex" ? CODEX_PLUGIN_SPEC : "",
  };
}

/** A builder sandbox (registry egress only, never a secret), from `source` or the bare runtime. */
function createBuilder(services: Services, source?: string) {
  return Sandbox.create({
    ...services.connection,
    name: `vm1-image-${randomBytes(3).toString("hex")}`,
    ...(source ? { source: { type: "snapshot", snapshotId: source } } : { runtime: VM1_RUNTIME }),
    ports: [GATEWAY_PORT],
    timeout: 30 * 60_000,
    networkPolicy: { allow: { [PACKAGE_REGISTRY]: [] } },
  } as Parameters<typeof Sandbox.create>[0]);
}

/** Runs `build` on a new builder and captures it; answers the snapshot id (saved in the emulator's store). */
async function captured(
  progress: Progress,
  services: Services,
  layer: string,
  source: string | undefined,
  build: (builder: Sandbox) => Promise<void>,
): Promise<string> {
  const builder = await progress.phase(`${layer}: create a builder sandbox (registry egress only)`, () =>
    createBuilder(services, source),
  );
  try {
    await build(builder);
    const snapshot = await progress.phase(`${layer}: capture (no gateway ran there, no secret on it)`, () =>
      builder.snapshot({ expiration: IMAGE_TTL_MS }),
    );
    await services.api.saveSnapshot(snapshot.snapshotId);
    return snapshot.snapshotId;
  } finally {
    await builder.delete().catch(() => undefined);
  }
}

/** The gateway layer: the mode's gateway from the registry. */
export function buildGatewayImage(progress: Progress, services: Services, mode: AgentMode): Promise<string> {
  const version = gatewayVersionFor(mode);
  return captured(progress, services, "VM1 gateway layer", undefined, (builder) =>
    progress.phase(`VM1: npm install openclaw@${version} from the npm registry`, () =>
      vm1.installOpenClaw(builder, services.front.caPem, version),
    ),
  );
}

/** The plugin layer, on the gateway layer: the base config and the packed plugin installed as a user installs it. */
export function buildPluginImage(
  progress: Progress,
  services: Services,
  plugin: { fileName: string; bytes: Buffer },
  gatewayImage: string,
  mode: AgentMode,
): Promise<string> {
  return captured(progress, services, "VM1 plugin layer", gatewayImage, async (builder) => {
    await progress.phase("VM1: openclaw plugins install npm-pack:<tarball>", async () => {
      const publicOrigin = builder.domain(GATEWAY_PORT);
      await vm1.writeConfig(builder, baseConfig({ port: GATEWAY_PORT, publicOrigin, logFile: VM1_LOG_FILE }));
      await vm1.installPlugin(builder, plugin.bytes, plugin.fileName);
    });
    if (mode === "codex") {
      await progress.phase(`VM1: openclaw plugins install ${CODEX_PLUGIN_SPEC}`, () => installCodex(builder));
    }
  });
}
