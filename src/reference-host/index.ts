// The door of the reference host: sleep and wake for VM1 in front of its gateway, built on the host library
// (src/host). Published as `openclaw-vercel-sandbox/reference-host`: the main job runs it, examples/host serves it.
// A host of your own imports `openclaw-vercel-sandbox/host` and may copy this room's shape.
export { BodyTooLargeError, bearerMatches, DEFAULT_MAX_BODY_BYTES, readBounded } from "./guards.js";
export { type Awake, createHost, type HostConfig } from "./host.js";
export { type Handler, InsecureBindError, isLoopback, serve } from "./server.js";
export { MAX_TIMER_MS, type WakeEvent, WakeTimer, type WakeTimerOptions } from "./wake-timer.js";
