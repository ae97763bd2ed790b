// VM1's image for reruns (issue 21): built in a builder sandbox of its own (the pinned gateway from the registry,
// the base config, this checkout's packed plugin installed as a user installs it), captured before any gateway
// ran there, so before any token, setup code or model key could reach it: the builder never gets a secret, and its
// firewall allows the registry alone. VM1 is then created from the image, told this run's API front CA and public
// origin, and configured and started as before (every secret only in the gateway command's environment).

import { randomBytes } from "node:crypto";
import { Sandbox } from "@vercel/sandbox";
import type { Progress } from "./report.js";
import { sha256, VM1_IMAGE_FORMAT, type Vm1ImageInputs } from "./reuse.js";
import type { Services } from "./services.js";
import { baseConfig, GATEWAY_PORT, OPENCLAW_VERSION, PACKAGE_REGISTRY } from "./topology.js";
import * as vm1 from "./vm1.js";

export const VM1_RUNTIME = "node24";
export const VM1_LOG_FILE = `${vm1.ROOT}/logs/openclaw.log`;
/** How long a cached image lives on the emulator unless a rerun replaces it. */
export const IMAGE_TTL_MS = 14 * 24 * 3600 * 1000;

/** What VM1's image is made of (reuse.ts keys it). */
export function vm1ImageInputs(plugin: Buffer): Vm1ImageInputs {
  return {
    format: VM1_IMAGE_FORMAT,
    openclaw: OPENCLAW_VERSION,
    plugin: sha256(plugin),
    runtime: VM1_RUNTIME,
    node: process.version,
    baseConfig: sha256(JSON.stringify(baseConfig({ port: GATEWAY_PORT, publicOrigin: "", logFile: VM1_LOG_FILE }))),
  };
}

/** Builds and captures VM1's image; answers its snapshot id (saved in the emulator's store for the next run). */
export async function buildVm1Image(
  progress: Progress,
  services: Services,
  plugin: { fileName: string; bytes: Buffer },
): Promise<string> {
  const { connection } = services;
  const builder = await progress.phase("VM1 image: create the builder sandbox (registry egress only)", () =>
    Sandbox.create({
      ...connection,
      name: `vm1-image-${randomBytes(3).toString("hex")}`,
      runtime: VM1_RUNTIME,
      ports: [GATEWAY_PORT],
      timeout: 30 * 60_000,
      networkPolicy: { allow: { [PACKAGE_REGISTRY]: [] } },
    } as Parameters<typeof Sandbox.create>[0]),
  );
  try {
    await progress.phase("VM1: npm install openclaw from the npm registry", () =>
      vm1.installOpenClaw(builder, services.front.caPem),
    );
    await progress.phase("VM1: openclaw plugins install npm-pack:<tarball>", async () => {
      const publicOrigin = builder.domain(GATEWAY_PORT);
      await vm1.writeConfig(builder, baseConfig({ port: GATEWAY_PORT, publicOrigin, logFile: VM1_LOG_FILE }));
      await vm1.installPlugin(builder, plugin.bytes, plugin.fileName);
    });
    const snapshot = await progress.phase("VM1 image: capture (no gateway ran there, no secret on it)", () =>
      builder.snapshot({ expiration: IMAGE_TTL_MS }),
    );
    await services.api.saveSnapshot(snapshot.snapshotId);
    return snapshot.snapshotId;
  } finally {
    await builder.delete().catch(() => undefined);
  }
}
