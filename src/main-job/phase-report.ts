// The main job's end: what is left before the teardown, the teardown phase (or, with --keep, a count of what stays),
// then the summary and the closing note (report.ts formats them).
import type { JobContext } from "./context.js";
import type { ImageReuse } from "./phase-image-reuse.js";
import { reuseLines } from "./phase-image-reuse.js";
import type { MessageOutcome } from "./phase-messages.js";
import type { ScheduledRecord } from "./phase-scheduled-wake.js";
import { closingNote, type ModelKeyEvidence, type SleepSplit, type Summary, summaryLines } from "./report.js";
import type { CachedBase } from "./reuse.js";

export interface ReportInputs {
  messages: MessageOutcome[];
  sleepSplit: SleepSplit;
  agent: string;
  modelKey: ModelKeyEvidence;
  scheduled: ScheduledRecord;
  reuse: ImageReuse;
  stepsBefore: string[];
  keptBases: CachedBase[];
}

/** Tears down (or counts what --keep leaves), then prints the summary and the closing note; returns the summary. */
export async function report(job: JobContext, inputs: ReportInputs): Promise<Summary> {
  const { progress, options, services, log } = job;
  const { messages, sleepSplit, agent, modelKey, scheduled } = inputs;
  progress.note(
    `before teardown: ${(await job.sandboxes()).length} sandbox(es), ${(await job.snapshots()).length} snapshot(s) (VM1 checkpoints and worker images)`,
  );
  const teardownPhase = options.keep ? "Count what is kept (--keep)" : "Teardown: delete sandboxes and snapshots";
  const left = await progress.phase(teardownPhase, async () => {
    if (!options.keep) await job.deleteAll();
    return {
      sandboxes: (await job.sandboxes()).length,
      snapshots: (await job.snapshots()).filter((s) => !job.cached().has(s.id)).length,
    };
  });
  const { image, basePlan } = inputs.reuse;
  const summary: Summary = {
    phases: progress.phases,
    apiRequests: services.api.requests().length,
    sandboxesCreated: job.creates(),
    sandboxesLeft: left.sandboxes,
    snapshotsLeft: left.snapshots,
    totalMs: Math.round(performance.now() - job.started),
    ...(image ? { reuse: reuseLines(job, image, basePlan, inputs.stepsBefore, inputs.keptBases) } : {}),
    kept: options.keep === true,
    agent,
    modelKey,
    scheduledWake: scheduled,
  };
  for (const line of [
    ...summaryLines(summary),
    ...closingNote(
      messages.map((m) => m.ms),
      progress,
      sleepSplit,
    ),
  ])
    log(line);
  return summary;
}
