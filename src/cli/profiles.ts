// The `vercel-sandbox` profiles of an OpenClaw config (`cloudWorkers.profiles.<id>` with that provider), each
// parsed as the provider would parse it, with the scope its sandboxes are tagged with. Pure.
import { effectiveScope, PROVIDER_ID } from "../provider/index.js";
import { type ProfileSettings, parseSettings, SettingsError } from "../settings/index.js";

export type ProfileEntry =
  | { id: string; ok: true; settings: ProfileSettings; scope: string }
  | { id: string; ok: false; error: SettingsError };

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** Profiles of this provider, sorted by id; `pluginScope` is the scope a profile without `scope` uses. */
export function vercelProfiles(config: unknown, pluginScope: string): ProfileEntry[] {
  const cloudWorkers = isRecord(config) ? config.cloudWorkers : undefined;
  const profiles = isRecord(cloudWorkers) ? cloudWorkers.profiles : undefined;
  if (!isRecord(profiles)) return [];
  const out: ProfileEntry[] = [];
  for (const [id, profile] of Object.entries(profiles)) {
    if (!isRecord(profile) || profile.provider !== PROVIDER_ID) continue;
    try {
      const settings = parseSettings(profile.settings);
      out.push({ id, ok: true, settings, scope: effectiveScope(settings.scope ?? pluginScope) });
    } catch (error) {
      if (!(error instanceof SettingsError)) throw error;
      out.push({ id, ok: false, error });
    }
  }
  return out.sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
}

/** Where to fix a profile's setting, as a config path. */
export function settingsPath(profileId: string, key: string): string {
  return `cloudWorkers.profiles.${profileId}.settings${key === "settings" ? "" : `.${key}`}`;
}
