// What a newcomer reads: one progress line per phase with its duration, notes under it, and the closing
// summary (phase timings, API requests, sandboxes and snapshots left, the scheduled wake). Pure formatting apart
// from `log`.
import type { ScheduledWake } from "./scheduled.js";

export type Log = (line: string) => void;

export interface PhaseRecord {
  name: string;
  ms: number;
  ok: boolean;
}

export class Progress {
  readonly phases: PhaseRecord[] = [];
  constructor(private readonly log: Log) {}

  /** Runs one phase: prints its start, then ✓ or ✗ with its duration. */
  async phase<T>(name: string, run: () => Promise<T>): Promise<T> {
    this.log(`▶ ${name}`);
    const started = performance.now();
    try {
      const value = await run();
      this.done(name, started, true);
      return value;
    } catch (error) {
      this.done(name, started, false);
      throw error;
    }
  }

  note(line: string): void {
    this.log(`    ${line}`);
  }

  private done(name: string, started: number, ok: boolean): void {
    const ms = Math.round(performance.now() - started);
    this.phases.push({ name, ms, ok });
    this.log(`${ok ? "✓" : "✗"} ${name} (${seconds(ms)})`);
  }
}

export function seconds(ms: number): string {
  return `${(ms / 1000).toFixed(1)} s`;
}

/** How the model's key reached the model: added by VM1's firewall, and found in no file of VM1's disk. */
export interface ModelKeyEvidence {
  /** Model requests answered (each carried the key, which VM1 never held). */
  answered: number;
  /** Model requests refused for a missing or wrong key. */
  refused: number;
  /** Files of VM1's own layer and its checkpoints that hold the key (on this machine's copy of VM1's disk). */
  filesOnVm1: string[];
  checkpoints: number;
}

export interface Summary {
  /** The cron job the host woke VM1 for: due, woken, ran. */
  scheduledWake?: ScheduledWake;
  phases: PhaseRecord[];
  apiRequests: number;
  sandboxesCreated: number;
  sandboxesLeft: number;
  snapshotsLeft: number;
  totalMs: number;
  kept: boolean;
  modelKey: ModelKeyEvidence;
  /** With the rerun cache: what was reused (and its key) and what was built. */
  reuse?: string[];
  /** Who the agent was and how its commands reached VM2 (one line). */
  agent?: string;
}

export function modelKeyLine({ answered, refused, filesOnVm1, checkpoints }: ModelKeyEvidence): string {
  const disk = `${checkpoints} checkpoint(s)`;
  const where =
    filesOnVm1.length === 0
      ? `found on no disk of VM1 (its own layer and ${disk})`
      : `FOUND in ${filesOnVm1.length} file(s) of VM1's layer and ${disk}`;
  return `  model key: injected by VM1's firewall into ${answered} model request(s) (${refused} refused without it); ${where}`;
}

export function summaryLines(summary: Summary): string[] {
  const width = Math.max(...summary.phases.map((p) => p.name.length), 10);
  return [
    "",
    "Summary",
    ...summary.phases.map((p) => `  ${p.ok ? "✓" : "✗"} ${p.name.padEnd(width)} ${seconds(p.ms).padStart(8)}`),
    `  total ${seconds(summary.totalMs)}`,
    ...(summary.agent ? [`  agent: ${summary.agent}`] : []),
    `  Vercel Sandbox API requests: ${summary.apiRequests}; sandboxes created: ${summary.sandboxesCreated}`,
    `  left behind: ${summary.sandboxesLeft} sandbox(es), ${summary.snapshotsLeft} snapshot(s)${summary.kept ? " (--keep)" : ""}`,
    ...(summary.reuse ?? []),
    modelKeyLine(summary.modelKey),
    ...(summary.scheduledWake ? [scheduledWakeLine(summary.scheduledWake)] : []),
  ];
}

/**
 * How the first sleep's time divides: from the sleep phase's start to the notification the host acted on (the
 * idle clock, its poll, and any attempts the suspend route refused), and from that notification until VM1 was
 * asleep (the suspend handshake, VM2's reclaim and VM1's checkpoint).
 */
export interface SleepSplit {
  idleMs: number;
  beyondMs: number;
  refused: number;
}

/** The closing note: the phase timings a reader compares with the seed's observations. */
export function closingNote(replyMs: number[], progress: Progress, split?: SleepSplit): string[] {
  const sleep = progress.phases.find((p) => p.name.startsWith("Idle"));
  const [cold, warm, woken] = replyMs;
  const fmt = (ms: number | undefined) => (ms === undefined ? "n/a" : seconds(ms));
  const parts = split
    ? ` (until the notification ${fmt(split.idleMs)}${split.refused > 0 ? `, ${split.refused} attempt(s) refused` : ""}; then asleep in ${fmt(split.beyondMs)})`
    : " (idle clock included)";
  return [
    `  cold first reply ${fmt(cold)} · warm second reply ${fmt(warm)} · sleep ${fmt(sleep?.ms)}${parts} · wake to reply ${fmt(woken)}`,
  ];
}

const at = (ms: number) => new Date(ms).toISOString().slice(11, 23);

/** The summary's line: the job's due time beside when VM1 was woken and when the job ran. */
export function scheduledWakeLine(wake: ScheduledWake): string {
  return `  scheduled job due ${at(wake.dueAtMs)}, VM1 woken at ${at(wake.wokenAtMs)}, ran at ${at(wake.ranAtMs)} (UTC; timer fired ${at(wake.firedAtMs)}, woken ${((wake.dueAtMs - wake.wokenAtMs) / 1000).toFixed(1)} s before due)`;
}
