// How long core waits for a provision and a destroy: the sum of what each step may take at most. Core aborts
// the call past it, so a budget that is too small fails healthy provisions and one too large hides a stuck one.
import type { WorkerProvider } from "openclaw/plugin-sdk/plugin-entry";
import { warmImagesOn } from "./profile.js";

const CREATE_BUDGET_MS = 3 * 60_000;
/** The bootstrap command (download 5 + install 10 + 2 minutes), the wait for the device (10) and evidence (1). */
const ENROLL_BUDGET_MS = 30 * 60_000;
const RELEASE_BUDGET_MS = 3 * 60_000;
/** Seed, recipe phases (30 minutes each at most; most recipes take a few), runtime, scrub, capture, restore. */
const PREPARE_BUDGET_MS = 60 * 60_000;

export const resolveProvisionTimeoutMs: NonNullable<WorkerProvider["resolveProvisionTimeoutMs"]> = (profile) => {
  const prepare = warmImagesOn(profile) ? PREPARE_BUDGET_MS : 0;
  return CREATE_BUDGET_MS + prepare + ENROLL_BUDGET_MS + RELEASE_BUDGET_MS;
};

export const resolveDestroyTimeoutMs: NonNullable<WorkerProvider["resolveDestroyTimeoutMs"]> = () =>
  RELEASE_BUDGET_MS + 3 * 60_000;
