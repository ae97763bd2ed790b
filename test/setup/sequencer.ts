// Vitest sequencer: the longest spec files start first, after the few that must start first (FIRST). On a fresh
// clone vitest has no timings and starts the largest files first, so the version specs (small files, the longest
// runs) started last and ran on one worker while the other sat idle. Longest-first keeps that short; it cannot
// shorten the work itself. The figures are the seconds each file took in a full run (`bash .ci/run` on 2 cores,
// 2026-12-07, its table of the slowest files); only their order matters, so a file that grows or shrinks a little
// needs no update here. Files not listed run after these, in vitest's own order.
import { BaseSequencer, type TestSpecification } from "vitest/node";

/**
 * Spec files that start before all others, in this order: the images-warm specs, whose builds are the run's base
 * runtime images of 2026.9.2 and of the newest release (test/gateway/base-images.ts), so the two go side by side
 * at the run's start, before the specs that wait for them.
 */
export const FIRST: readonly string[] = ["test/gateway/images-warm.test.ts", "test/gateway/images-warm-newest.test.ts"];

/** Seconds per spec file (repository-relative), from the last full run; files under ~90 s are left out. */
export const LONG_SPEC_SECONDS: Readonly<Record<string, number>> = {
  "test/gateway/codex-remote-exec.test.ts": 720,
  "test/main-job.test.ts": 591,
  "test/gateway/worker-cap.test.ts": 583,
  "test/gateway/versions.test.ts": 446,
  "test/gateway/worker-turn.test.ts": 430,
  "test/gateway/cli.test.ts": 150,
  "test/gateway/ready-workers.test.ts": 300,
  "test/gateway/embedded.test.ts": 272,
  "test/gateway/versions-enrollment.test.ts": 270,
  "test/gateway/enrollment.test.ts": 263,
  "test/gateway/scheduled-wake.test.ts": 201,
  "test/gateway/suspend-workers.test.ts": 178,
  "test/gateway/plugin.test.ts": 177,
  "test/bench.test.ts": 173,
  "test/gateway/suspend-turns.test.ts": 129,
  "test/gateway/suspend-notify.test.ts": 128,
  "test/gateway/suspend-host.test.ts": 104,
  "test/gateway/suspend.test.ts": 95,
};

/**
 * `files` with those of `first` first (in its order), then the rest longest first by `seconds` (by
 * repository-relative path); the unlisted keep their order after.
 */
export function longestFirst<T>(
  files: readonly T[],
  pathOf: (file: T) => string,
  seconds = LONG_SPEC_SECONDS,
  first: readonly string[] = FIRST,
): T[] {
  const weight = (file: T) => {
    const at = first.indexOf(pathOf(file));
    return at >= 0 ? Number.MAX_SAFE_INTEGER - at : (seconds[pathOf(file)] ?? -1);
  };
  return files
    .map((file, index) => ({ file, index, weight: weight(file) }))
    .sort((a, b) => b.weight - a.weight || a.index - b.index)
    .map(({ file }) => file);
}

export default class LongestFirstSequencer extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const root = this.ctx.config.root;
    const relative = (spec: TestSpecification) =>
      spec.moduleId
        .slice(root.length + 1)
        .split("\\")
        .join("/");
    return longestFirst(await super.sort(files), relative);
  }
}
