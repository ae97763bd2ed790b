// The door to the real-gateway test harness: what the gateway tests import. The harness itself is
// GatewayHarness (gateway-harness.ts), assembled from the single-purpose modules beside it.

export type { CallResult } from "./cli-output.js";
export { parseCliJson } from "./cli-output.js";
export { freePort } from "./free-port.js";
export { GatewayHarness } from "./gateway-harness.js";
export type { StartOptions } from "./gateway-process.js";
export { checkNodeForOpenClaw, NPM_CACHE, OPENCLAW_ENTRY, REPO_ROOT } from "./openclaw.js";
export type { RunOptions, RunResult } from "./processes.js";
export { sleep, waitFor } from "./wait.js";
