// The main job's scheduled wake (issue 23): during the conversation an OpenClaw cron job is added on VM1 (the
// `automations add` CLI, which calls the gateway's `cron.add`), due shortly after VM1 will be asleep. The
// plugin projects its run time to the host as a signed wake snapshot; the host's wake timer wakes VM1 before it
// is due; the woken gateway runs it (a command job: it appends the time to a file on VM1's disk) and records the
// run, which `cron.runs` reads back later. The numbers below fit the emulator: its wake takes 15-35 s here.
import type { Sandbox } from "@vercel/sandbox";
import { openclaw, ROOT, sh } from "./vm1.js";

/**
 * The host's own lead (`wakeAheadMs`), on top of the gateway's 45 s: room for a slow wake. Kept under the idle
 * clock (15-20 s here), since the woken gateway holds sleep only within its own lead of the job.
 */
export const HOST_WAKE_AHEAD_MS = 12_000;
/**
 * The host's bound on one suspend (busy and draining answers retried until it passes). The reclaim of VM2 inside
 * it took 8 s on a quiet machine, and more than the reference host's default 60 s once in a loaded CI run.
 */
export const SUSPEND_DEADLINE_MS = 90_000;
/**
 * From adding the job to its due time. The gateway holds sleep once the job is within its 45 s lead, so VM1 must be
 * asleep before that: the idle clock (15-20 s) and one whole suspend attempt (up to SUSPEND_DEADLINE_MS) fit in
 * what comes before the lead and the host's own lead (12 s); the wake (15-35 s) fits in the lead.
 */
export const DUE_AFTER_MS = 165_000;

const JOB_NAME = "main-job-scheduled-wake";
/** Where the job writes the time it ran (on VM1's disk: the woken gateway's own work). */
export const SCHEDULED_MARKER = `${ROOT}/logs/scheduled-job.txt`;

export interface ScheduledWake {
  jobId: string;
  dueAtMs: number;
  /** When the host's timer fired and when VM1's gateway was ready again (from the host's wake event). */
  firedAtMs: number;
  wokenAtMs: number;
  /** When the woken gateway ran it: its cron.runs entry, and the time the job itself wrote on VM1. */
  ranAtMs: number;
  markerMs: number;
  runStatus: string;
}

/** The due time for a job added now: whole seconds (cron `--at` takes an ISO time). */
export function dueAt(addedAtMs: number): number {
  return Math.ceil((addedAtMs + DUE_AFTER_MS) / 1_000) * 1_000;
}

/** The JSON object a CLI printed (log lines may come before it); undefined when there is none. */
export function jsonOf<T>(stdout: string): T | undefined {
  const start = stdout.indexOf("{");
  const end = stdout.lastIndexOf("}");
  for (const text of [stdout.trim(), start >= 0 && end > start ? stdout.slice(start, end + 1) : ""]) {
    try {
      return JSON.parse(text) as T;
    } catch {
      // the next candidate
    }
  }
  return undefined;
}

export class ScheduledJobError extends Error {
  override readonly name = "ScheduledJobError";
}

/** Adds the one-shot command job on VM1's gateway; returns its id. */
export async function addScheduledJob(vm1: Sandbox, gatewayToken: string, dueAtMs: number): Promise<string> {
  const out = await openclaw(
    vm1,
    "openclaw automations add",
    [
      "automations",
      "add",
      "--name",
      JOB_NAME,
      "--at",
      new Date(dueAtMs).toISOString(),
      "--command",
      `date +%s%3N >> ${SCHEDULED_MARKER}`,
      "--no-deliver",
      "--keep-after-run",
      "--json",
    ],
    { OPENCLAW_GATEWAY_TOKEN: gatewayToken },
  );
  const id = jsonOf<{ id?: unknown }>(out)?.id;
  if (typeof id !== "string" || id === "")
    throw new ScheduledJobError(`automations add gave no job id: ${out.slice(-300)}`);
  return id;
}

export interface CronRun {
  ts: number;
  runAtMs?: number;
  status?: string;
}

/** The job's runs as the gateway recorded them (`cron.runs`), oldest first. */
export async function cronRuns(vm1: Sandbox, gatewayToken: string, jobId: string): Promise<CronRun[]> {
  const out = await openclaw(
    vm1,
    "openclaw gateway call cron.runs",
    ["gateway", "call", "cron.runs", "--params", JSON.stringify({ id: jobId }), "--json"],
    { OPENCLAW_GATEWAY_TOKEN: gatewayToken },
  );
  const entries = jsonOf<{ entries?: Array<Partial<CronRun> & { jobId?: string }> }>(out)?.entries ?? [];
  return entries
    .filter((e) => e.jobId === jobId && typeof e.ts === "number")
    .map((e) => ({
      ts: e.ts as number,
      ...(typeof e.runAtMs === "number" ? { runAtMs: e.runAtMs } : {}),
      ...(typeof e.status === "string" ? { status: e.status } : {}),
    }))
    .sort((a, b) => a.ts - b.ts);
}

/** The times the job wrote on VM1's disk (one line per run). */
export async function markerTimes(vm1: Sandbox): Promise<number[]> {
  const out = await sh(vm1, "read the scheduled job's marker", `cat ${SCHEDULED_MARKER} 2>/dev/null || true`);
  return out
    .split("\n")
    .filter((line) => /^[0-9]{13}$/.test(line.trim()))
    .map(Number);
}
