// Our sandboxes on Vercel, per profile: those tagged with the profile's scope, listed through the client seam
// with the credentials this CLI process can resolve. Embedded profiles are not listed: their emulator runs
// inside the gateway process, which a CLI process cannot see (and must not start a second one of).

import { messageOf } from "../infra/index.js";
import { TAG_SCOPE } from "../provider/index.js";
import type { SandboxSummary, VercelClient, VercelProject } from "../vercel/index.js";
import { CredentialsError, VercelApiError } from "../vercel/index.js";
import type { ProfileEntry } from "./profiles.js";

export const EMBEDDED_NOTE =
  "embedded backend: its sandboxes live in the gateway process's emulator, which this CLI cannot see";

export type Listing = { profileId: string; scope: string } & (
  | { state: "listed"; project: VercelProject; sandboxes: SandboxSummary[] }
  | { state: "failed"; error: string; remedy: string }
  | { state: "skipped"; reason: string }
);

/** What to do about a failure to reach a profile's Vercel project. */
export function remedyFor(error: unknown, profileId: string): string {
  if (error instanceof CredentialsError) {
    return "Export the variable in the gateway's environment (and in this shell, which is what this command reads)";
  }
  if (error instanceof VercelApiError) {
    switch (error.kind) {
      case "auth":
        return `The token was refused: create a token with access to the profile's team and update ${profileId}'s token source`;
      case "not_found":
      case "gone":
        return `Check ${profileId}'s teamId and projectId (Vercel dashboard → project → Settings)`;
      case "transient":
      case "aborted":
        return "Vercel did not answer in time: check this machine's network or proxy and retry";
      default:
        return "Check the profile's settings and the Vercel status page, then retry";
    }
  }
  return "Retry; if it persists, run `openclaw vercel-sandbox doctor`";
}

export async function listProfile(client: VercelClient, profile: ProfileEntry, signal?: AbortSignal): Promise<Listing> {
  if (!profile.ok) {
    return {
      profileId: profile.id,
      scope: "?",
      state: "skipped",
      reason: `invalid settings: ${profile.error.message}`,
    };
  }
  const base = { profileId: profile.id, scope: profile.scope };
  if (profile.settings.backend === "embedded") return { ...base, state: "skipped", reason: EMBEDDED_NOTE };
  try {
    const project = await client.project(profile.settings);
    const sandboxes = await project.list({ [TAG_SCOPE]: profile.scope }, signal);
    return {
      ...base,
      state: "listed",
      project,
      sandboxes: sandboxes.filter((s) => s.tags[TAG_SCOPE] === profile.scope),
    };
  } catch (error) {
    return { ...base, state: "failed", error: messageOf(error), remedy: remedyFor(error, profile.id) };
  }
}

export function listProfiles(client: VercelClient, profiles: readonly ProfileEntry[], signal?: AbortSignal) {
  return Promise.all(profiles.map((p) => listProfile(client, p, signal)));
}
