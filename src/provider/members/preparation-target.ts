// The two prepared-pool questions OpenClaw 2026.9.4 and later ask about a profile before any allocation, answered
// from the profile alone (no Vercel call, no secret): the target core fingerprints a prepared project with, and
// how long an unused ready worker may wait. A profile without warm images, an invalid one, another operating
// system or an unknown machine class has neither, so core keeps no ready worker for it and dispatch provisions
// as before. 2026.9.2 never asks.

import { type ProfileSettings, parseSettings } from "../../settings/index.js";
import type { PreparationTarget, PreparedPoolMembers, WorkerProfile } from "../options.js";
import { vcpusOfMachineClass } from "../policy.js";

/** Vercel Sandbox runs Amazon Linux on x86-64; no other platform is offered. */
const PLATFORM = "linux";
const ARCH = "x64";

function preparedSettings(profile: WorkerProfile): ProfileSettings | undefined {
  try {
    const settings = parseSettings(profile);
    return settings.warmImage ? settings : undefined;
  } catch {
    return undefined;
  }
}

export const resolvePreparationTarget: PreparedPoolMembers["resolvePreparationTarget"] = (
  profile,
  machineClass,
  os,
): PreparationTarget | undefined => {
  const settings = preparedSettings(profile);
  if (!settings || (os !== undefined && os !== PLATFORM)) return undefined;
  const vcpus = machineClass === undefined ? settings.vcpus : vcpusOfMachineClass(machineClass);
  if (vcpus === undefined) return undefined;
  return { machineClass: `vcpu-${vcpus}`, platform: PLATFORM, arch: ARCH };
};

/**
 * The provider's existing idle policy: the profile's `timeout`, the most a sandbox of it runs without the
 * lease's keepalive. Core measures it from the demand that asked for the ready worker and destroys the worker
 * once it passes unused. A profile with `maxWorkers` keeps no ready worker (undefined): one would hold a slot of
 * the cap, and admitting it could reclaim a session's idle worker to make room for a worker nobody asked for.
 */
export const resolvePreparedIdleTimeoutMs: PreparedPoolMembers["resolvePreparedIdleTimeoutMs"] = (profile) => {
  const settings = preparedSettings(profile);
  return settings && settings.maxWorkers === undefined ? settings.timeoutMs : undefined;
};
