// One `maintain` pass: per configured profile, release the sandboxes of leases core already destroyed (a late
// replay re-created them), nothing else; then one bounded warm-image retention pass (src/preparation).
//
// A profile's failure — settings we refuse, credentials this process lacks, a project Vercel will not list, a
// release that failed — is that profile's alone: the pass goes on with the others (a bad profile must not keep
// a good one's orphans alive or stop retention), logs each failed profile, and reports them all at the end.
// Only lost authority (`assertCurrent`) or an aborted signal stops the whole pass. Core hands `maintain` the
// profiles' settings without their ids, in id order, so a failed profile is named by its position.
import { WorkerProviderError } from "openclaw/plugin-sdk/plugin-entry";
import type { MaintainContext, ProviderLogger } from "../infra/index.js";
import { messageOf } from "../infra/index.js";
import type { ImageStore } from "../preparation/index.js";
import { maintainImages, profileKeyOf, type RetentionProfile } from "../preparation/index.js";
import { type ProfileSettings, VCPU_CHOICES } from "../settings/index.js";
import type { VercelProject } from "../vercel/index.js";
import { effectiveScope, leaseIdOf, TAG_SCOPE } from "./allocation.js";
import type { LeaseLedger } from "./ledger.js";
import { type AbsenceProof, type RetainedSnapshots, releaseSandbox } from "./release.js";
import type { KeyedSerial } from "./serial.js";

const RELEASES_PER_PASS = 16;

export interface MaintenanceDeps {
  ledger: LeaseLedger;
  images: ImageStore;
  serial: KeyedSerial;
  retained: RetainedSnapshots;
  absenceProof: AbsenceProof;
  logger: ProviderLogger;
  /** The provider's scope; a profile's `scope` setting wins. */
  scope: string | undefined;
  settingsOf(profile: unknown): ProfileSettings;
  projectFor(settings: ProfileSettings): Promise<VercelProject>;
}

export interface ProfileFailure {
  /** "profile 2 of 3": its position among the provider's profiles in id order. */
  profile: string;
  /** Redacted. */
  reason: string;
  /** The profile's settings were refused (a permanent error), as opposed to a failure a later pass may not meet. */
  refused: boolean;
}

/** Some profiles could not be maintained; the others were. */
export class MaintenanceError extends Error {
  override readonly name = "MaintenanceError";
  constructor(readonly failures: readonly ProfileFailure[]) {
    super(describe(failures));
  }
}

function describe(failures: readonly ProfileFailure[]): string {
  const each = failures.map((f) => `${f.profile}: ${f.reason}`).join("; ");
  return `vercel-sandbox maintenance skipped ${failures.length} profile(s) and maintained the others — ${each}`;
}

/** What `maintain` throws for the failed profiles: a refusal of settings stays the contract's permanent error. */
export function maintenanceFailure(failures: readonly ProfileFailure[]): Error {
  return failures.every((f) => f.refused)
    ? new WorkerProviderError(describe(failures))
    : new MaintenanceError(failures);
}

interface Usable {
  index: number;
  settings: ProfileSettings;
}

/** Runs the pass; resolves with the profiles that failed (each already logged). */
export async function maintenancePass(deps: MaintenanceDeps, context: MaintainContext): Promise<ProfileFailure[]> {
  let lostAuthority = false;
  const assertCurrent = () => {
    try {
      context.assertCurrent();
    } catch (error) {
      lostAuthority = true;
      throw error;
    }
  };
  const failures = new Map<number, ProfileFailure>();
  const count = context.profiles.length;
  const fail = (index: number, error: unknown) => {
    if (lostAuthority || context.signal.aborted) throw error;
    if (failures.has(index)) return;
    const failure = {
      profile: `profile ${index + 1} of ${count} (in id order)`,
      reason: messageOf(error),
      refused: error instanceof WorkerProviderError,
    };
    failures.set(index, failure);
    deps.logger.warn(`vercel-sandbox maintenance skipped ${failure.profile}: ${failure.reason}`);
  };
  const usable: Usable[] = [];
  context.profiles.forEach((profile, index) => {
    try {
      usable.push({ index, settings: deps.settingsOf(profile) });
    } catch (error) {
      fail(index, error);
    }
  });
  const pass = { ...context, assertCurrent };
  await releaseOrphans(deps, pass, usable, fail);
  if (!context.signal.aborted) await retention(deps, pass, usable, fail);
  return [...failures.values()];
}

type Fail = (index: number, error: unknown) => void;

async function releaseOrphans(deps: MaintenanceDeps, context: MaintainContext, usable: Usable[], fail: Fail) {
  let budget = RELEASES_PER_PASS;
  for (const { index, settings } of usable) {
    if (context.signal.aborted || budget === 0) return;
    try {
      const scope = effectiveScope(settings.scope ?? deps.scope);
      const project = await deps.projectFor(settings);
      for (const summary of await project.list({ [TAG_SCOPE]: scope }, context.signal)) {
        const leaseId = leaseIdOf(summary.name);
        if (!leaseId || !(await deps.ledger.tombstone(leaseId)) || budget === 0 || context.signal.aborted) continue;
        // Only a lease core already destroyed is proof that this sandbox is an orphan.
        context.assertCurrent();
        budget -= 1;
        await deps.serial.run(leaseId, () =>
          releaseSandbox(project, summary.name, deps.retained, context.signal, deps.absenceProof),
        );
        context.assertCurrent();
        await deps.ledger.markAbsent(leaseId);
        deps.logger.warn(`vercel-sandbox maintenance released orphaned sandbox ${summary.name} of lease ${leaseId}`);
      }
    } catch (error) {
      fail(index, error);
    }
  }
}

async function retention(deps: MaintenanceDeps, context: MaintainContext, usable: Usable[], fail: Fail) {
  // Only profiles that have images: retention never starts a backend (or the embedded emulator) for nothing.
  const imaged = new Set((await deps.images.images()).map((image) => image.profileKey));
  const profiles: RetentionProfile[] = [];
  // Keys of a profile whose project is out of reach: a profile sharing the key with gentler rules could
  // otherwise delete what the failed profile keeps, so nobody's rules apply to those images this pass.
  const blocked = new Set<string>();
  for (const { index, settings } of usable) {
    // One image key family per machine class the profile can be placed on.
    const keys = VCPU_CHOICES.map((vcpus) => profileKeyOf(settings, vcpus)).filter((key) => imaged.has(key));
    if (keys.length === 0) continue;
    let project: VercelProject;
    try {
      project = await deps.projectFor(settings);
    } catch (error) {
      fail(index, error);
      for (const key of keys) blocked.add(key);
      continue;
    }
    const { keep, unusedForMs } = settings.images;
    for (const profileKey of keys) profiles.push({ profileKey, keep, unusedForMs, project });
  }
  const runnable = profiles.filter((p) => !blocked.has(p.profileKey));
  if (runnable.length === 0) return;
  await maintainImages({
    store: deps.images,
    profiles: runnable,
    now: Date.now(),
    signal: context.signal,
    assertCurrent: context.assertCurrent,
    logger: deps.logger,
  });
}
