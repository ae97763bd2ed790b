// The door of the SDK walk-through (`openclaw-vercel-sandbox demo`, what `npm run demo:sdk` runs): the emulator's
// lifecycle through the real SDK, then the worker provider's, both against the embedded emulator. The CLI entry
// loads it on demand.
export { runEmulatorDemo } from "./emulator.js";
export { runProviderDemo } from "./provider.js";
