// The main job (`npm start`): seed 000's whole cycle on this machine, on the embedded emulator, one progress
// line per phase with its duration. VM1 is built the way a user would build it; the host hands three messages
// over; the second must reuse the warm VM2 and adds a cron job; idle then puts VM1 to sleep, the host's scheduled
// wake wakes it before the job is due and the job runs in the woken gateway; VM1 sleeps again, and the third
// message wakes it.
//
// `runMainJob` is the sequence; each phase is a file of its own, taking the run's context (`context.ts`):
// `phase-setup.ts` (services, secrets, plugin), `phase-image-reuse.ts` (the rerun cache's images), `phase-vm1.ts`
// (VM1 and its host), `phase-messages.ts` (the three messages and their proofs), `phase-scheduled-wake.ts` (sleep,
// the cron job's wake and run), `phase-evidence.ts` (secrets on VM1's disk and image, the model key) and
// `phase-report.ts` (teardown, summary).
import { createOwnedTempDir, redact } from "../infra/index.js";
import { openCache } from "./cache.js";
import type { JobContext, MainJobOptions } from "./context.js";
import { gatherEvidence } from "./phase-evidence.js";
import { keepBaseImages, planImageReuse } from "./phase-image-reuse.js";
import { firstMessages, type MessageOutcome, wokenMessage } from "./phase-messages.js";
import { report } from "./phase-report.js";
import { type ScheduledRecord, scheduledRun, sleepAndScheduledWake } from "./phase-scheduled-wake.js";
import { setUpJob } from "./phase-setup.js";
import { buildVm1 } from "./phase-vm1.js";
import { type Log, Progress, type SleepSplit, type Summary } from "./report.js";
import { Teardown } from "./teardown.js";
import { DEMO_TIMERS } from "./topology.js";

export type { MainJobOptions } from "./context.js";
export type { MessageOutcome } from "./phase-messages.js";

export interface MainJobResult {
  vm1Name: string;
  messages: MessageOutcome[];
  sleep: unknown;
  /** The first sleep's time: until the notification the host acted on, then until VM1 was asleep. */
  sleepSplit: SleepSplit;
  afterSleep: { vm1Status: string; sandboxes: string[]; checkpoints: number };
  /** The cron job the host woke VM1 for, when the first sleep ended, and the sleep after the job's run (epoch ms). */
  scheduled: ScheduledRecord;
  gatewayInstances: { beforeSleep: string; afterWake: string };
  secretsOnVm1: string[];
  summary: Summary;
}

export interface MainJob {
  done: Promise<MainJobResult>;
  /** Ends everything the job started (Ctrl-C); resolves with the teardown steps that failed. */
  stop(): Promise<string[]>;
}

export function startMainJob(options: MainJobOptions = {}): MainJob {
  const write = options.log ?? ((line: string) => process.stdout.write(`${line}\n`));
  // Every line is redacted: the model's key is registered as a secret (services.ts).
  const log = (line: string) => write(redact(line));
  const teardown = new Teardown();
  return { done: runMainJob(options, log, teardown), stop: () => teardown.run(log) };
}

async function runMainJob(options: MainJobOptions, log: Log, teardown: Teardown): Promise<MainJobResult> {
  const progress = new Progress(log);
  const started = performance.now();
  const timers = options.timers ?? DEMO_TIMERS;
  const mode = options.mode ?? "worker-turn";
  // Holds the API front's keys, the packed plugin and the emulator's data dir; removed last, or on exit.
  const jobDir = await createOwnedTempDir("vsb-main-job-");
  const tmp = jobDir.path;
  teardown.add("remove the job's temp dir", () => jobDir.remove());
  let completed = false;
  const cache = options.reuse ? await openCache(options.reuse.dir, options.reuse.fresh) : undefined;
  if (options.reuse && !cache)
    progress.note(`the rerun cache ${options.reuse.dir} is in use by another run: none used`);
  if (cache) teardown.add("release the rerun cache", () => cache.release());
  try {
    const setup = await setUpJob({ options, log, progress, teardown, started, timers, mode, tmp, cache });
    const reuse = await planImageReuse(setup);
    const job: JobContext = { ...setup, ...(await buildVm1(setup, reuse)) };

    const conversation = await firstMessages(job);
    const wake = await sleepAndScheduledWake(job);
    const agent = await wokenMessage(job, conversation);
    const { scheduled, afterWake } = await scheduledRun(job, wake);
    const { secretsOnVm1, vm1Disk, modelKey } = await gatherEvidence(job, reuse.image);
    const keptBases = await keepBaseImages(job, vm1Disk.secrets);
    const { messages, stepsBefore } = conversation;
    const { sleep, sleepSplit, afterSleep, beforeSleep } = wake;
    const summary = await report(job, {
      messages,
      sleepSplit,
      agent,
      modelKey,
      scheduled,
      reuse,
      stepsBefore,
      keptBases,
    });
    completed = true;
    return {
      vm1Name: job.box.name,
      messages,
      sleep,
      sleepSplit,
      afterSleep,
      scheduled,
      gatewayInstances: { beforeSleep, afterWake },
      secretsOnVm1,
      summary,
    };
  } finally {
    // With --keep a completed job stays up until the caller stops it (Ctrl-C).
    if (!(completed && options.keep)) await teardown.run(log);
  }
}
