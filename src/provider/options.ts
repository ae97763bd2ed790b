// What a caller hands `createVercelSandboxProvider`, and what it gets back: OpenClaw's WorkerProvider plus the
// few members the plugin itself uses (renew, dispose, keepaliveLeases).
import type { WorkerProvider } from "openclaw/plugin-sdk/plugin-entry";
import type { ProviderLogger } from "../infra/index.js";
import type { VercelClientOptions } from "../vercel/index.js";
import type { BootstrapEnrollerOptions } from "./enrollment/index.js";
import type { AbsenceProof, RetainedSnapshots } from "./release.js";
import type { NodeEnroller } from "./steps/enroll.js";
import type { AdoptLookups, ProvisionStep } from "./steps/run.js";

export const PROVIDER_ID = "vercel-sandbox";

export interface VercelSandboxProviderOptions extends VercelClientOptions {
  logger?: ProviderLogger;
  /** Gateway scope mixed into lease ids and tags; a profile's `scope` setting wins. */
  scope?: string;
  /** Where the lease ledger lives; in memory when absent. */
  stateDir?: string;
  /** Replaces the built-in node bootstrap (tests, custom images). */
  enroll?: NodeEnroller;
  /** Tunes the built-in node bootstrap, e.g. a shorter wait for the device. */
  enrollment?: Omit<BootstrapEnrollerOptions, "logger">;
  retainedSnapshots?: RetainedSnapshots;
  /** Keepalive tick interval; by default a third of the session timeout, between 5 s and 5 minutes. */
  keepaliveIntervalMs?: number;
  /** Observes provision progress (tests, diagnostics). */
  onStep?: (step: ProvisionStep, leaseId: string) => void;
  /** How long release keeps looking up a deleted sandbox until the API says it is gone; about 10 s by default. */
  absenceProof?: AbsenceProof;
  /** How long a create that conflicted waits for the sandbox of its name to appear; about 12 s by default. */
  adoptLookups?: AdoptLookups;
  /** Told when a provision starts and settles (the plugin's idle clock counts it as activity). */
  activity?: { provisionStarted(leaseId: string): void; provisionEnded(leaseId: string): void };
}

/** A profile as core hands it to a provider (its settings snapshot). */
export type WorkerProfile = Parameters<WorkerProvider["inspect"]>[0]["profile"];

/** What core fingerprints before a prepared allocation: the effective machine class and platform. */
export interface PreparationTarget {
  machineClass: string;
  platform: string;
  arch?: string;
}

/**
 * The prepared-pool members OpenClaw 2026.9.4 and later ask of a provider that keeps ready workers
 * (docs/plugins/sdk-overview/capabilities.md, "prepared-project ready capacity"). 2026.9.2's WorkerProvider
 * lacks them, so they are declared here; a 9.2 gateway never calls them.
 */
export interface PreparedPoolMembers {
  resolvePreparationTarget(profile: WorkerProfile, machineClass?: string, os?: string): PreparationTarget | undefined;
  resolvePreparedIdleTimeoutMs(profile: WorkerProfile): number | undefined;
  notePreparedDemand(
    lease: { leaseId: string; profile: WorkerProfile },
    demand: { preparationKey: string; demandAtMs: number },
  ): Promise<void>;
}

export type VercelSandboxProvider = WorkerProvider &
  PreparedPoolMembers & {
    renew(leaseId: string): Promise<void>;
    /** Stops every keepalive; the plugin service calls it on gateway stop. */
    dispose(): Promise<void>;
    /** Leases whose keepalive runs in this process (diagnostics). */
    keepaliveLeases(): string[];
  };
