// Pure identities of warm images. An image is reusable by a later lease exactly when it was made with the same
// image-relevant profile settings (where it lives and what machine it is) for the same project. Shared by
// project (the default), the commit and recipe are not part of the key: a new commit refreshes the same
// project's image in place, on top of what earlier recipes left. Shared by commit, images have a key of their
// own (never one a project-shared image was built under) and serve only leases of the commit that built them.
import { createHash } from "node:crypto";
import type { ImageSharing, ProfileSettings } from "../settings/index.js";

/** Bump when what a prepared image contains changes shape, so older images are not reused. */
const IMAGE_FORMAT = 1;
/** Project images are refreshed once they are this old, even at the same commit. */
export const IMAGE_REFRESH_AGE_MS = 24 * 60 * 60_000;

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

/** The commit an image must have been built at to serve a lease, when images are shared by commit. */
export function requiredCommitOf(sharing: ImageSharing, baseCommit: string): string | undefined {
  return sharing === "commit" ? baseCommit : undefined;
}

/** The prepared checkout's directory name on the box: short, and only [0-9a-f]. */
export function checkoutNameOf(projectKey: string): string {
  return createHash("sha256").update(projectKey).digest("hex").slice(0, 16);
}

/**
 * Whether a worker that started from `image` should capture a new one: when its preparation did anything (a
 * new commit or recipe), or when the image is old enough to refresh (runtime, worker archive, caches).
 * Returns why not, or undefined when an image is due. A cold start always captures.
 */
export function imageCurrentReason(
  image: { createdAt: number } | undefined,
  event: "initial" | "refresh" | "unchanged",
  now: number,
): string | undefined {
  if (!image || event !== "unchanged") return undefined;
  if (now - image.createdAt >= IMAGE_REFRESH_AGE_MS) return undefined;
  return "the image this worker started from is current";
}
