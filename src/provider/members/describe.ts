// The members that answer questions about a profile without touching Vercel: whether it prepares projects, its
// machine classes, and the lease an operation gets (the same id on every replay, so core can reconcile).
import type { WorkerProvider } from "openclaw/plugin-sdk/plugin-entry";
import type { ProviderParts } from "../parts.js";
import { machineOptions } from "../policy.js";
import { settingsOf, warmImagesOn } from "./profile.js";

export const supportsProjectPreparation: NonNullable<WorkerProvider["supportsProjectPreparation"]> = warmImagesOn;

export const listMachineOptions: NonNullable<WorkerProvider["listMachineOptions"]> = async (profile) =>
  machineOptions(settingsOf(profile));

export function createResolveAllocation({ allocationFor }: ProviderParts): WorkerProvider["resolveAllocation"] {
  return async function resolveAllocation(profile, operationId) {
    const { leaseId } = allocationFor(settingsOf(profile), operationId);
    return { leaseId, sharedHost: false };
  };
}
