import { defineConfig } from "vitest/config";
import LongestFirstSequencer from "./test/setup/sequencer.js";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    testTimeout: 60_000,
    hookTimeout: 180_000,
    // Emulator and gateway tests start real processes; two cores keep them honest when run one file at a time.
    fileParallelism: true,
    // Each file in its own process: emulator and gateway tests count their own child processes.
    pool: "forks",
    maxWorkers: 2,
    // The longest spec files first (test/setup/sequencer.ts): two workers finish together.
    sequence: { sequencer: LongestFirstSequencer },
    // Each run gets its own TMPDIR and fails if it leaves a temp entry of ours behind (test/setup/temp-check.ts).
    globalSetup: ["test/setup/temp-check.ts"],
    // Each failure's reason as it happens, not only in the summary at the end (test/setup/failure-reporter.ts).
    reporters: ["default", "./test/setup/failure-reporter.ts"],
  },
});
