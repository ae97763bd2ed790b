// The door of the main job (`openclaw-vercel-sandbox start`, what `npm start` runs): seed 000's whole cycle on
// the embedded emulator. The CLI entry loads it on demand.
export { runStartCommand } from "./cli.js";
