// The main job's scheduled wake (scheduled.ts holds its gateway-side helpers): a cron job added on VM1, idle puts
// VM1 to sleep (refused attempts noted), the host keeps the gateway's wake list and arms one timer, wakes VM1
// before the job is due, the job runs in the woken gateway and VM1 sleeps again; after message 3, the gateway's
// record of the run and the time the job wrote on VM1 make the `scheduled` record.
import { listCheckpoints } from "../host/index.js";
import type { WakeEvent } from "../reference-host/index.js";
import type { JobContext } from "./context.js";
import { gatewayInstance } from "./evidence.js";
import type { SleepAttempt } from "./host.js";
import { pollUntil } from "./poll.js";
import { type SleepSplit, seconds } from "./report.js";
import {
  addScheduledJob,
  cronRuns,
  dueAt,
  HOST_WAKE_AHEAD_MS,
  markerTimes,
  ScheduledJobError,
  type ScheduledWake,
} from "./scheduled.js";
import { WAKE_LEAD } from "./topology.js";

/** The cron job the host woke VM1 for, when the first sleep ended, and the sleep after the job's run (epoch ms). */
export type ScheduledRecord = ScheduledWake & {
  asleepAtMs: number;
  secondSleep: unknown;
  secondSleptAtMs: number;
  /** Other jobs in the host's wake snapshot when VM1 first slept (the gateway's own; the job's config has none). */
  otherWakes: Array<{ jobId: string; runAtMs: number }>;
};

/** What the sleep and the scheduled wake left for the job's record. */
export interface SleepAndWake {
  /** VM1's gateway instance before the first sleep. */
  beforeSleep: string;
  jobId: string;
  dueAtMs: number;
  firstSleep: SleepAttempt;
  sleep: unknown;
  sleepSplit: SleepSplit;
  afterSleep: { vm1Status: string; sandboxes: string[]; checkpoints: number };
  otherWakes: Array<{ jobId: string; runAtMs: number }>;
  woken: Extract<WakeEvent, { kind: "woke" }>;
  secondSleep: unknown;
  secondSleptAtMs: number;
}

/**
 * The cron job added, the first sleep (idle), the host's kept wake list and its timer, then the scheduled wake:
 * the host wakes VM1 for the job, which runs, and VM1 sleeps again.
 */
export async function sleepAndScheduledWake(job: JobContext): Promise<SleepAndWake> {
  const { progress, host, secrets, publicOrigin, timers, box, services } = job;
  const beforeSleep = await gatewayInstance(publicOrigin, secrets.gatewayToken);
  const dueAtMs = dueAt(Date.now());
  const jobId = await progress.phase("Cron job added (automations add → cron.add), due after VM1 sleeps", async () =>
    addScheduledJob(await host.vm1(), secrets.gatewayToken, dueAtMs),
  );
  progress.note(
    `job ${jobId} due ${new Date(dueAtMs).toISOString()}; gateway wakeLead ${WAKE_LEAD}, host lead ${HOST_WAKE_AHEAD_MS / 1000} s`,
  );

  const idleFromMs = Date.now();
  const firstSleep = await progress.phase(
    `Idle ${timers.idleAfter}: notify → suspend (VM2 reclaimed) → VM1 checkpoint`,
    () => pollUntil("the host to put VM1 to sleep", async () => host.slept()[0], 600_000),
  );
  // The suspend route rechecks the gateway's work under its lock: an attempt it refused (work still running when
  // the host's deadline passed) is not a failure; the plugin notifies again while sleep stays due.
  const refusedSleeps = host.sleeps.slice(0, host.sleeps.indexOf(firstSleep));
  for (const refused of refusedSleeps) progress.note(`host: sleep not taken: ${JSON.stringify(refused.outcome)}`);
  const sleep = firstSleep.outcome;
  const sleepSplit = {
    idleMs: firstSleep.notifiedAtMs - idleFromMs,
    beyondMs: firstSleep.endedAtMs - firstSleep.notifiedAtMs,
    refused: refusedSleeps.length,
  };
  const afterSleep = {
    vm1Status: (await host.vm1()).status,
    sandboxes: (await job.sandboxes()).filter((s) => s.status === "running").map((s) => s.name),
    checkpoints: (await listCheckpoints(services.connection, box.name)).filter((s) => s.status === "created").length,
  };
  progress.note(`host: ${JSON.stringify(sleep)}`);
  progress.note(
    `VM1 ${afterSleep.vm1Status}; running sandboxes: ${afterSleep.sandboxes.length}; VM1 checkpoints: ${afterSleep.checkpoints}`,
  );
  // The host keeps the gateway's whole wake list and sets one timer, for the soonest job: another job of the
  // gateway due first is woken for first, and the timer is set for this one after it.
  const keptWakes = (await host.keptWake())?.snapshot.wakes ?? [];
  if (!keptWakes.some((wake) => wake.jobId === jobId)) {
    throw new ScheduledJobError(
      "the host's wake snapshot does not list the cron job (the gateway asked no wake for it)",
    );
  }
  const otherWakes = keptWakes
    .filter((wake) => wake.jobId !== jobId)
    .map((wake) => ({ jobId: wake.jobId, runAtMs: wake.runAtMs }));
  for (const other of otherWakes) {
    progress.note(
      `host: the gateway also asks to be awake for job ${other.jobId} due ${new Date(other.runAtMs).toISOString()}`,
    );
  }
  const armed = host.wakes.findLast((event) => event.kind === "armed");
  if (armed?.kind !== "armed") throw new ScheduledJobError("the host set no wake timer after VM1 slept");
  progress.note(
    `host: wake timer set for ${new Date(armed.atMs).toISOString()} (${armed.jobId === jobId ? "the job" : `job ${armed.jobId}, due first`})`,
  );

  const woken = await progress.phase(
    "Scheduled wake: the host wakes VM1 from the wake snapshot, the job runs, VM1 sleeps again",
    async () => {
      const event = (await pollUntil(
        "the host's scheduled wake of VM1",
        async () => host.wakes.find((e) => e.kind === "woke" && e.jobId === jobId),
        300_000,
      )) as Extract<WakeEvent, { kind: "woke" }>;
      // The one-shot job's timer fires once: VM1 still awake then (asleep too late for the job's lead) means the
      // gateway ran the job itself and no wake of VM1 for it will come. Said now, not after the next poll's bound.
      if (!event.woke) {
        throw new ScheduledJobError(
          `the host's timer for the job fired at ${new Date(event.firedAtMs).toISOString()} while VM1 was awake (asleep at ${new Date(firstSleep.endedAtMs).toISOString()}, ${refusedSleeps.length} sleep(s) refused before)`,
        );
      }
      const again = await pollUntil(
        "the host to put VM1 to sleep again after the job",
        async () => host.slept().find((sleep) => sleep.endedAtMs > event.awakeAtMs),
        600_000,
      );
      return { ...event, again };
    },
  );
  const { outcome: secondSleep, endedAtMs: secondSleptAtMs } = woken.again;
  progress.note(`host: woke VM1 in ${seconds(woken.ms)}, then ${JSON.stringify(secondSleep)}`);
  return {
    beforeSleep,
    jobId,
    dueAtMs,
    firstSleep,
    sleep,
    sleepSplit,
    afterSleep,
    otherWakes,
    woken,
    secondSleep,
    secondSleptAtMs,
  };
}

/**
 * After message 3: the woken gateway's instance, its record of the job's run and the time the job wrote on VM1,
 * as the `scheduled` record.
 */
export async function scheduledRun(
  job: JobContext,
  wake: SleepAndWake,
): Promise<{ scheduled: ScheduledRecord; afterWake: string }> {
  const { progress, host, secrets, publicOrigin } = job;
  const { jobId, dueAtMs, woken, firstSleep, secondSleep, secondSleptAtMs, otherWakes, beforeSleep } = wake;
  const afterWake = await gatewayInstance(publicOrigin, secrets.gatewayToken);
  const runs = await cronRuns(await host.vm1(), secrets.gatewayToken, jobId);
  const [marker] = await markerTimes(await host.vm1());
  const run = runs[0];
  if (!run || marker === undefined) throw new ScheduledJobError(`the woken gateway recorded no run of ${jobId}`);
  const scheduled = {
    jobId,
    dueAtMs,
    firedAtMs: woken.firedAtMs,
    wokenAtMs: woken.awakeAtMs,
    ranAtMs: run.runAtMs ?? run.ts,
    markerMs: marker,
    runStatus: run.status ?? "unknown",
    asleepAtMs: firstSleep.endedAtMs,
    secondSleep,
    secondSleptAtMs,
    otherWakes,
  };
  progress.note(
    `cron.runs: ${runs.length} run(s) of ${jobId}, ${scheduled.runStatus}; the job wrote ${new Date(marker).toISOString()} on VM1`,
  );
  progress.note(`gateway instance ${beforeSleep} before the sleep, ${afterWake} after the wake`);
  return { scheduled, afterWake };
}
