// Pure identities of warm images. Two kinds:
// - a base image holds the gateway's verified runtime and nothing of any project or lease; its key is the
//   profile's image-relevant settings (backend, account, sandbox runtime, vcpus, region, scope) and the digests
//   of what core hands over (runtime archive, worker archive, version, enabled plugins), so a new runtime
//   digest builds a new base image and never reuses an older one;
// - a project image is captured on top of the base image of its runtime (never on an older project image) at
//   one commit, and serves only leases of that project at that commit with that base key. `images.shareBy`
//   keeps commit-shared images under keys of their own (never one a project-shared image was built under).
import { createHash } from "node:crypto";
import type { ImageSharing, ProfileSettings } from "../settings/index.js";

/** Bump when what a prepared image contains changes shape, so older images are not reused. */
const IMAGE_FORMAT = 2;

const sha256 = (value: unknown) => createHash("sha256").update(JSON.stringify(value)).digest("hex");

/** The settings that shape an image: backend and account (never a secret value), runtime, machine, region. */
export function profileKeyOf(settings: ProfileSettings, vcpus: number): string {
  const credentials = settings.credentials;
  const account =
    credentials.kind === "oidc" ? { oidc: true } : { teamId: credentials.teamId, projectId: credentials.projectId };
  return sha256({
    format: IMAGE_FORMAT,
    backend: settings.backend,
    apiUrl: settings.apiUrl ?? null,
    account,
    runtime: settings.runtime,
    vcpus,
    region: settings.region ?? null,
    scope: settings.scope ?? null,
  });
}

/** A project's image key; commit-shared images get their own, so no project-shared image ever serves them. */
export function imageKeyOf(profileKey: string, projectKey: string, sharing: ImageSharing = "project"): string {
  return sharing === "project" ? sha256({ profileKey, projectKey }) : sha256({ profileKey, projectKey, sharing });
}

/** The prepared checkout's directory name on the box: short, and only [0-9a-f]. */
export function checkoutNameOf(projectKey: string): string {
  return createHash("sha256").update(projectKey).digest("hex").slice(0, 16);
}

/** What core hands over for a worker's runtime; only the digests and names that decide the installed files. */
export interface RuntimeIdentity {
  nodeBootstrap: { sha256: string; openclawVersion: string; enabledPluginIds: readonly string[] };
  workerBundle: { sha256: string; packageRelativePath: string };
}

/**
 * Only the identity of what core hands over (digests, version, names), never its URLs or bearer tokens: what a
 * base image record keeps, so its key can be recomputed for the same runtime under another profile key.
 */
export function runtimeIdentityOf(runtime: RuntimeIdentity): RuntimeIdentity {
  const { nodeBootstrap, workerBundle } = runtime;
  return {
    nodeBootstrap: {
      sha256: nodeBootstrap.sha256,
      openclawVersion: nodeBootstrap.openclawVersion,
      enabledPluginIds: [...nodeBootstrap.enabledPluginIds],
    },
    workerBundle: { sha256: workerBundle.sha256, packageRelativePath: workerBundle.packageRelativePath },
  };
}

/** The base image key: one per runtime digest and sandbox shape (the profile key). */
export function baseKeyOf(profileKey: string, runtime: RuntimeIdentity): string {
  return sha256({
    kind: "base",
    profileKey,
    runtime: runtime.nodeBootstrap.sha256,
    version: runtime.nodeBootstrap.openclawVersion,
    plugins: [...runtime.nodeBootstrap.enabledPluginIds].sort(),
    worker: runtime.workerBundle.sha256,
    workerPath: runtime.workerBundle.packageRelativePath,
  });
}
