// What a newcomer reads: one progress line per phase with its duration, notes under it, and the closing
// summary (phase timings, API requests, sandboxes and snapshots left). Pure formatting apart from `log`.

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

export interface Summary {
  phases: PhaseRecord[];
  apiRequests: number;
  sandboxesCreated: number;
  sandboxesLeft: number;
  snapshotsLeft: number;
  totalMs: number;
  kept: boolean;
}

export function summaryLines(summary: Summary): string[] {
  const width = Math.max(...summary.phases.map((p) => p.name.length), 10);
  return [
    "",
    "Summary",
    ...summary.phases.map((p) => `  ${p.ok ? "✓" : "✗"} ${p.name.padEnd(width)} ${seconds(p.ms).padStart(8)}`),
    `  total ${seconds(summary.totalMs)}`,
    `  Vercel Sandbox API requests: ${summary.apiRequests}; sandboxes created: ${summary.sandboxesCreated}`,
    `  left behind: ${summary.sandboxesLeft} sandbox(es), ${summary.snapshotsLeft} snapshot(s)${summary.kept ? " (--keep)" : ""}`,
  ];
}

/** The closing note: the phase timings a reader compares with the seed's observations. */
export function closingNote(replyMs: number[], progress: Progress): string[] {
  const sleep = progress.phases.find((p) => p.name.startsWith("Idle"));
  const [cold, warm, woken] = replyMs;
  const fmt = (ms: number | undefined) => (ms === undefined ? "n/a" : seconds(ms));
  return [
    `  cold first reply ${fmt(cold)} · warm second reply ${fmt(warm)} · sleep ${fmt(sleep?.ms)} (idle clock included) · wake to reply ${fmt(woken)}`,
  ];
}
