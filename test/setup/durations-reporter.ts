// A reporter that, at the end of a run, writes every spec file's wall seconds and the run's to the JSON file that
// VSB_TEST_DURATIONS names (nothing when it is unset). `.ci/run` prints the slowest files from it
// (scripts/slowest-files.mjs), the figures test/setup/sequencer.ts orders the files by.
//
// A file's seconds run from the moment its worker starts collecting it (vitest's onTestModuleQueued, which comes
// after the worker set up its environment and runner: those durations are added) to the end of its last test and
// hook (onTestModuleEnd), as vitest's main process sees them; a file still running when the run ends (interrupted)
// counts until then. The run's seconds run from onTestRunStart to onTestRunEnd.
import { mkdirSync, writeFileSync } from "node:fs";
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
}

const seconds = (ms: number) => Math.round(ms) / 1000;

export default class DurationsReporter implements Reporter {
  private root = process.cwd();
  private runStart = Date.now();
  private readonly queued = new Map<string, number>();
  private readonly ended = new Map<string, number>();
  private readonly cpu = new Map<string, number>();

  onInit(vitest: Vitest): void {
    this.root = vitest.config.root;
  }

  onTestRunStart(): void {
    this.runStart = Date.now();
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
    const durations: Durations = { wallSeconds: seconds(now - this.runStart), reason, files, cpu };
    mkdirSync(path.dirname(path.resolve(target)), { recursive: true });
    writeFileSync(target, `${JSON.stringify(durations, null, 2)}\n`);
  }

  private relative(moduleId: string): string {
    return path.relative(this.root, moduleId).split(path.sep).join("/");
  }
}
