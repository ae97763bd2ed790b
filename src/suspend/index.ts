// The door to sleep and wake inside the plugin: the entry calls registerSuspend. The wire protocol and its
// signature live in src/protocol, which the host library (src/host) imports too.

export { capConfigured, registerWorkerCapRoutes } from "./cap-plugin.js";
export type { ClockSnapshot, Fence } from "./clock.js";
export { IdleClock } from "./clock.js";
export { checkSuspend, dueReason, type NotifyReason, type SleepPolicy, sessionDeadline } from "./decide.js";
export { registerSuspend, type SuspendView } from "./plugin.js";
export { resolveSuspendSettings, type SuspendConfigInput } from "./settings.js";
