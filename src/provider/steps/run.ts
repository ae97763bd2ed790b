// What one provision attempt carries from step to step (allocate → create or adopt → prepare → enroll → keep
// alive), and what the steps share from the provider. Each step lives in its own module; the one cleanup rule
// for all of them is in cleanup.ts.

import type { NodeEnrollment, ProviderLogger, ProvisionOptions } from "../../infra/index.js";
import type { ProfileSettings } from "../../settings/index.js";
import type { VercelProject } from "../../vercel/index.js";
import type { Allocation } from "../allocation.js";
import type { AbsenceProof, RetainedSnapshots } from "../release.js";

export type ProvisionStep = "allocated" | "adopted" | "prepared" | "enrollment-started" | "enrolled" | "released";

export interface AdoptLookups {
  attempts: number;
  firstDelayMs: number;
}

export interface ProvisionRun {
  allocation: Allocation;
  settings: ProfileSettings;
  rawSettings: unknown;
  vcpus: number;
  options: ProvisionOptions;
  project: VercelProject;
  /** Whether a sandbox of ours may exist now: from then on a failure has something to release. */
  mayExist: boolean;
  /**
   * Whether this attempt created the sandbox (cold, or from an image captured before any enrollment): no node
   * of this lease can run there yet, so enrollment skips the check for one to adopt.
   */
  created?: boolean;
  /** Core's enrollment, once begun: its signal tells a gateway shutdown apart from an operator's Stop. */
  enrollment?: NodeEnrollment;
}

export interface StepContext {
  logger: ProviderLogger;
  adoptLookups: AdoptLookups;
  absenceProof: AbsenceProof;
  retained: RetainedSnapshots;
  step(name: ProvisionStep, leaseId: string): void;
}
