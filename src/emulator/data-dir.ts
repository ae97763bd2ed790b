// The prefix of the emulator's own data dir when the caller names none: an owned temp dir (src/infra
// owned-temp-dir.ts) that goes with the emulator, and that a later emulator sweeps if its owner died.
export const DATA_DIR_PREFIX = "vercel-sandbox-emulator-";
