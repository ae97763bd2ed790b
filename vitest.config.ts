import { defaultExclude, defineConfig } from "vitest/config";
import LongestFirstSequencer from "./test/setup/sequencer.js";
import { realGatewaySpecFiles } from "./test/setup/suites.js";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    // `npm run test:fast` (VSB_TEST_FAST=1): without the spec files that start a real gateway (test/setup/suites.ts).
    exclude: process.env.VSB_TEST_FAST === "1" ? [...defaultExclude, ...realGatewaySpecFiles()] : defaultExclude,
    testTimeout: 60_000,
    hookTimeout: 180_000,
    fileParallelism: true,
    // Each file in its own process: emulator and gateway tests count their own child processes.
    pool: "forks",
    // Four files at a time on two cores: most spec files wait far more than they compute (an emulator spec runs
    // ~13 s for ~3 s of CPU, the fault matrix 73 s for 4 s; a gateway spec waits on clocks, turns and npm), so two
    // workers left the cores idle a third of the run. Per-file CPU is in the slowest-files table (.ci/run).
    maxWorkers: 4,
    // The longest spec files first (test/setup/sequencer.ts): the workers finish together.
    sequence: { sequencer: LongestFirstSequencer },
    // Each run gets its own TMPDIR and fails if it leaves a temp entry of ours behind (test/setup/temp-check.ts).
    // A run cache the spec files share (test/setup/run-cache.ts), removed before the temp check looks.
    globalSetup: ["test/setup/temp-check.ts", "test/setup/run-cache.ts"],
    // Each failure's reason as it happens, not only in the summary at the end (test/setup/failure-reporter.ts).
    // Each spec file's seconds to the file VSB_TEST_DURATIONS names, for .ci/run (test/setup/durations-reporter.ts).
    reporters: ["default", "./test/setup/failure-reporter.ts", "./test/setup/durations-reporter.ts"],
    // Each spec file's CPU seconds, with its processes', for that reporter (test/setup/file-cpu.ts).
    setupFiles: ["test/setup/file-cpu.ts"],
  },
});
