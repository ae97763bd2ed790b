// A reporter that, at the end of a run, writes every spec file's wall seconds and the run's to the JSON file that
// VSB_TEST_DURATIONS names (nothing when it is unset). `.ci/run` prints the slowest files from it
// (scripts/slowest-files.mjs), the figures test/setup/sequencer.ts orders the files by.
//
// A file's seconds run from the moment its worker starts collecting it (vitest's onTestModuleQueued, which comes
// after the worker set up its environment and runner: those durations are added) to the end of its last test and
// hook (onTestModuleEnd), as vitest's main process sees them; a file still running when the run ends (interrupted)
// counts until then. The run's seconds run from onTestRunStart to onTestRunEnd.
//
// The whole machine's busy CPU seconds over the same span (/proc/stat), beside the files' own: a file's CPU counts
// only the processes its worker waited for, not a sandbox's programs (their holder is not the worker's child) nor
// anything else on the machine, and two cores run out of the whole machine's.
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { availableParallelism } from "node:os";
import path from "node:path";
import type { Reporter, SerializedError, TestModule, TestRunEndReason, Vitest } from "vitest/node";

export const DURATIONS_ENV = "VSB_TEST_DURATIONS";

/** What the file holds. */
export interface Durations {
  /** Wall seconds from the run's start to its end. */
  wallSeconds: number;
  /** How the run ended: "passed", "failed" or "interrupted". */
  reason: TestRunEndReason;
  /** Wall seconds per spec file, by repository-relative path (`/`-separated). */
  files: Record<string, number>;
  /** CPU seconds per spec file, its worker's with the processes it waited for (test/setup/file-cpu.ts). */
  cpu?: Record<string, number>;
  /** The whole machine's busy CPU seconds from the run's start to its end, and the cores it had (Linux only). */
  machine?: { cpuSeconds: number; cores: number };
}

/** Clock ticks per second on Linux (sysconf(_SC_CLK_TCK) is 100 on every kernel Node supports there). */
const TICKS = 100;

/**
 * Busy CPU seconds of all cores since boot from /proc/stat's first (`cpu`) line: user, nice, system, irq, softirq
 * and steal; idle and iowait are not busy, and guest time is already in user. Undefined without such a line.
 */
export function busySeconds(procStat: string): number | undefined {
  const line = procStat.split("\n").find((l) => /^cpu\s/.test(l));
  if (!line) return undefined;
  const [user, nice, system, , , irq, softirq, steal] = line.trim().split(/\s+/).slice(1).map(Number);
  const busy = [user, nice, system, irq, softirq, steal].reduce<number>((sum, v) => sum + (v ?? 0), 0);
  return Number.isFinite(busy) ? busy / TICKS : undefined;
}

function machineBusySeconds(): number | undefined {
  try {
    return busySeconds(readFileSync("/proc/stat", "utf8"));
  } catch {
    return undefined;
  }
}

const seconds = (ms: number) => Math.round(ms) / 1000;

export default class DurationsReporter implements Reporter {
  private root = process.cwd();
  private runStart = Date.now();
  private busyAtStart: number | undefined;
  private readonly queued = new Map<string, number>();
  private readonly ended = new Map<string, number>();
  private readonly cpu = new Map<string, number>();

  onInit(vitest: Vitest): void {
    this.root = vitest.config.root;
  }

  onTestRunStart(): void {
    this.runStart = Date.now();
    this.busyAtStart = machineBusySeconds();
    this.queued.clear();
    this.ended.clear();
    this.cpu.clear();
  }

  onTestModuleQueued(testModule: TestModule): void {
    if (!this.queued.has(testModule.moduleId)) this.queued.set(testModule.moduleId, Date.now());
  }

  onTestModuleEnd(testModule: TestModule): void {
    const start = this.queued.get(testModule.moduleId);
    const { environmentSetupDuration, prepareDuration, collectDuration, setupDuration, duration } =
      testModule.diagnostic();
    const before = environmentSetupDuration + prepareDuration;
    // Without a queued moment (not seen so far), vitest's own account of the file's phases.
    const ms = start === undefined ? before + collectDuration + setupDuration + duration : Date.now() - start + before;
    this.ended.set(testModule.moduleId, ms);
    const cpu = (testModule.meta() as { cpuSeconds?: unknown }).cpuSeconds;
    if (typeof cpu === "number") this.cpu.set(testModule.moduleId, cpu);
  }

  onTestRunEnd(
    _modules: ReadonlyArray<TestModule>,
    _errors: ReadonlyArray<SerializedError>,
    reason: TestRunEndReason,
  ): void {
    const target = process.env[DURATIONS_ENV];
    if (!target) return;
    const now = Date.now();
    const files: Record<string, number> = {};
    for (const [moduleId, start] of this.queued) {
      if (!this.ended.has(moduleId)) this.ended.set(moduleId, now - start);
    }
    const entries = [...this.ended].map(([moduleId, ms]) => [this.relative(moduleId), ms] as const);
    for (const [file, ms] of entries.sort(([, a], [, b]) => b - a)) files[file] = seconds(ms);
    const cpu = Object.fromEntries([...this.cpu].map(([moduleId, s]) => [this.relative(moduleId), s]));
    const busy = machineBusySeconds();
    const machine =
      busy !== undefined && this.busyAtStart !== undefined
        ? { cpuSeconds: Math.round((busy - this.busyAtStart) * 10) / 10, cores: availableParallelism() }
        : undefined;
    const durations: Durations = {
      wallSeconds: seconds(now - this.runStart),
      reason,
      files,
      cpu,
      ...(machine ? { machine } : {}),
    };
    mkdirSync(path.dirname(path.resolve(target)), { recursive: true });
    writeFileSync(target, `${JSON.stringify(durations, null, 2)}\n`);
  }

  private relative(moduleId: string): string {
    return path.relative(this.root, moduleId).split(path.sep).join("/");
  }
}
