// Scheduled wake: the gateway's next cron run times, projected to the host as one complete snapshot (never a
// delta), so a host can wake a sleeping VM1 shortly before a job is due. The same list is in GET status, so a
// host that missed a notification recovers it. A snapshot's `revision` grows across gateway processes (it is
// at least the wall clock of its projection), so a host keeps only the highest and never goes back to a stale one.
import { type Static, Type } from "@sinclair/typebox";

/** Most wakes one snapshot carries (the soonest are kept; `truncated` says when more were due). */
export const MAX_WAKES = 256;

export const WakeSchema = Type.Object(
  {
    jobId: Type.String({ minLength: 1, maxLength: 256 }),
    /** When the job is next due (epoch ms). */
    runAtMs: Type.Integer({ minimum: 0 }),
  },
  { additionalProperties: false },
);
export type Wake = Static<typeof WakeSchema>;

export const WakeSnapshotSchema = Type.Object(
  {
    /** Strictly increasing across projections and gateway processes; a host accepts only a higher one. */
    revision: Type.Integer({ minimum: 1 }),
    /** Every enabled job's next run, soonest first (empty: nothing scheduled, or cron disabled). */
    wakes: Type.Array(WakeSchema, { maxItems: MAX_WAKES }),
    truncated: Type.Optional(Type.Boolean()),
  },
  { additionalProperties: false },
);
export type WakeSnapshot = Static<typeof WakeSnapshotSchema>;

/** The signed notification carrying a snapshot (POSTed to the same notifyUrl, signed like the sleep one). */
export const WakeNotificationSchema = Type.Object(
  {
    version: Type.Literal(1),
    kind: Type.Literal("wake"),
    /** Random per gateway process. */
    instanceId: Type.String({ maxLength: 128 }),
    sentAtMs: Type.Integer(),
    /** How long before a due job the gateway wants to be awake (the host's lead). */
    leadMs: Type.Integer({ minimum: 0 }),
    snapshot: WakeSnapshotSchema,
  },
  { additionalProperties: false },
);
export type WakeNotification = Static<typeof WakeNotificationSchema>;

/** The wakes a cron listing yields: enabled jobs with a next run, soonest first, bounded. Pure. */
export function wakesOf(jobs: ReadonlyArray<{ id?: unknown; enabled?: unknown; state?: { nextRunAtMs?: unknown } }>): {
  wakes: Wake[];
  truncated: boolean;
} {
  const all: Wake[] = [];
  for (const job of jobs) {
    const runAtMs = job?.state?.nextRunAtMs;
    if (job?.enabled === false || typeof job?.id !== "string" || job.id.length === 0 || job.id.length > 256) continue;
    if (typeof runAtMs !== "number" || !Number.isSafeInteger(runAtMs) || runAtMs < 0) continue;
    all.push({ jobId: job.id, runAtMs });
  }
  all.sort((a, b) => a.runAtMs - b.runAtMs || (a.jobId < b.jobId ? -1 : a.jobId > b.jobId ? 1 : 0));
  return { wakes: all.slice(0, MAX_WAKES), truncated: all.length > MAX_WAKES };
}
