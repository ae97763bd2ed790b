// Vitest sequencer: the longest spec files start first. On a fresh clone vitest has no timings and starts the
// largest files first, so the version specs (small files, the longest runs) started last and ran on one worker
// while the other sat idle (the run's length less half its total file time: 173 s on 2026-12-01). Longest-first
// keeps that short (100 s on 2026-12-02); it cannot shorten the work itself, which two heavy gateway specs side
// by side can lengthen. The figures are the seconds each file took in a full CI run (`bash .ci/run` on 2 cores,
// 2026-12-01); only their order matters, so a file that grows or shrinks a little needs no update here. Files
// not listed run after these, in vitest's own order.
import { BaseSequencer, type TestSpecification } from "vitest/node";

/** Seconds per spec file (repository-relative), from the last full CI run; files under ~90 s are left out. */
export const LONG_SPEC_SECONDS: Readonly<Record<string, number>> = {
  "test/gateway/versions.test.ts": 855,
  "test/gateway/worker-cap.test.ts": 838,
  "test/gateway/codex-remote-exec.test.ts": 779,
  "test/main-job.test.ts": 706,
  "test/gateway/worker-turn.test.ts": 678,
  "test/gateway/ready-workers.test.ts": 604,
  "test/gateway/versions-enrollment.test.ts": 570,
  "test/gateway/enrollment.test.ts": 480,
  "test/gateway/cli.test.ts": 339,
  "test/gateway/suspend-workers.test.ts": 279,
  "test/gateway/embedded.test.ts": 272,
  "test/gateway/scheduled-wake.test.ts": 201,
  "test/provider/matrix.test.ts": 179,
  "test/gateway/plugin.test.ts": 177,
  "test/bench.test.ts": 173,
  "test/gateway/suspend-turns.test.ts": 129,
  "test/gateway/suspend-notify.test.ts": 128,
  "test/gateway/suspend-host.test.ts": 104,
  "test/gateway/suspend.test.ts": 95,
};

/** `files` ordered longest first by `seconds` (by repository-relative path); the rest keep their order after. */
export function longestFirst<T>(files: readonly T[], pathOf: (file: T) => string, seconds = LONG_SPEC_SECONDS): T[] {
  const weight = (file: T) => seconds[pathOf(file)] ?? -1;
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
