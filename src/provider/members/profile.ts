// Reading a profile's settings the way the contract wants it read: an invalid profile is a permanent
// WorkerProviderError (core does not retry it), and asked only whether it keeps warm images, the answer is no
// (provision then reports what is wrong).
import { WorkerProviderError } from "openclaw/plugin-sdk/plugin-entry";
import { type ProfileSettings, parseSettings, SettingsError } from "../../settings/index.js";

export function settingsOf(profile: unknown): ProfileSettings {
  try {
    return parseSettings(profile);
  } catch (error) {
    if (error instanceof SettingsError) throw new WorkerProviderError(error.message);
    throw error;
  }
}

/** Whether a profile keeps warm images; an invalid profile prepares nothing. */
export function warmImagesOn(profile: unknown): boolean {
  try {
    return parseSettings(profile).warmImage;
  } catch {
    return false;
  }
}
