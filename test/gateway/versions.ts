// The OpenClaw gateways the real-gateway specs run on: the pinned 2026.9.2 from the repo's own node_modules (the
// devDependency, locked in package-lock.json), and every later 2026.9.x installed side by side in the machine
// cache (test/support/machine-cache.ts) under openclaw-gateways/<version>-<key>, never into the root node_modules;
// the key is the digest of the install's manifest, the repo's .npmrc and this Node's ABI and platform, so a
// second clone or run on the machine reuses it. Each install is its own small npm project with the exact version,
// its own package-lock.json, the repo's install-script allowlist and the repo's .npmrc (release age and strict
// install scripts stay on), and the npm cache of the gateway tests.
import { existsSync, readFileSync } from "node:fs";
import path from "node:path";
import { contentKey, machineCacheDir } from "../support/machine-cache.js";
import { PINNED_OPENCLAW_VERSION, REPO_ROOT } from "./openclaw.js";
import { installStaged } from "./staged-install.js";

/** Every 2026.9.x on the registry (`npm view openclaw versions`), oldest first; the pinned one is the first. */
export const GATEWAY_VERSIONS = [PINNED_OPENCLAW_VERSION, "2026.9.3", "2026.9.4", "2026.9.5", "2026.9.6"] as const;
export type GatewayVersion = (typeof GATEWAY_VERSIONS)[number];
export const NEWEST_OPENCLAW_VERSION: GatewayVersion = GATEWAY_VERSIONS[GATEWAY_VERSIONS.length - 1]!;
/** The releases between the pinned and the newest: each gets the smaller smoke (install, ready, destroy). */
export const BETWEEN_VERSIONS = GATEWAY_VERSIONS.slice(1, -1);

/** The directory holding `node_modules/openclaw` for `version`. */
export function openclawPrefix(version: string): string {
  if (version === PINNED_OPENCLAW_VERSION) return REPO_ROOT;
  if (!(GATEWAY_VERSIONS as readonly string[]).includes(version)) {
    throw new Error(`openclaw ${version} is not one of the tested gateways (${GATEWAY_VERSIONS.join(", ")})`);
  }
  const key = contentKey(
    projectManifest(version),
    readFileSync(path.join(REPO_ROOT, ".npmrc"), "utf8"),
    process.versions.modules,
    `${process.platform}-${process.arch}`,
  );
  return path.join(machineCacheDir(), "openclaw-gateways", `${version}-${key}`);
}

/** The openclaw.mjs of `version`. */
export function openclawEntryOf(version: string): string {
  return path.join(openclawPrefix(version), "node_modules", "openclaw", "openclaw.mjs");
}

function installedVersion(prefix: string): string | undefined {
  try {
    const manifest = path.join(prefix, "node_modules", "openclaw", "package.json");
    return (JSON.parse(readFileSync(manifest, "utf8")) as { version?: string }).version;
  } catch {
    return undefined;
  }
}

/** The npm project one side-by-side gateway is installed from: the exact version and the repo's script allowlist. */
function projectManifest(version: string): string {
  const root = JSON.parse(readFileSync(path.join(REPO_ROOT, "package.json"), "utf8")) as {
    allowScripts?: Record<string, boolean>;
  };
  const name = `openclaw-gateway-${version.replaceAll(".", "-")}`;
  return `${JSON.stringify({ name, private: true, dependencies: { openclaw: version }, allowScripts: root.allowScripts }, null, 2)}\n`;
}

/**
 * Makes `version` runnable and returns its openclaw.mjs. The pinned one must be installed already (npm ci);
 * a later one is installed once into a fresh staging directory and renamed into place, so test files that
 * need it at the same time never see half an install (the loser of the rename keeps the winner's).
 */
export async function ensureOpenClaw(version: string): Promise<string> {
  const prefix = openclawPrefix(version);
  const entry = openclawEntryOf(version);
  if (installedVersion(prefix) === version && existsSync(entry)) return entry;
  if (version === PINNED_OPENCLAW_VERSION) {
    throw new Error(
      `openclaw ${version} is not installed at ${entry}; run \`npm run setup\` (or npm ci under Node 24)`,
    );
  }
  await installStaged({
    prefix,
    stagingPrefix: `${prefix}.staging-`,
    manifest: projectManifest(version),
    what: `openclaw@${version}`,
    complete: (dir) => installedVersion(dir) === version,
  });
  return entry;
}
