// The door to sleep and wake inside the plugin: the entry calls registerSuspend; the host library reuses the
// protocol and the signature.

export type { ClockSnapshot, Fence } from "./clock.js";
export { IdleClock } from "./clock.js";
export { checkSuspend, dueReason, type NotifyReason, type SleepPolicy, sessionDeadline } from "./decide.js";
export { registerSuspend, type SuspendView } from "./plugin.js";
export * from "./protocol.js";
export { resolveSuspendSettings, type SuspendConfigInput } from "./settings.js";
export { NONCE_HEADER, SIGNATURE_HEADER, signatureMatches, signNotification, TIMESTAMP_HEADER } from "./signature.js";
