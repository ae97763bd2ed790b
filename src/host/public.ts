// `openclaw-vercel-sandbox/host`, the host library's public entry (tsup.config.ts): what a host (e.g. a Vercel
// Function in front of VM1) imports to take part in sleep and wake: verify the resident's notifications, drive
// status/suspend/resume, and the wire protocol as TypeBox schemas (docs/protocol.md describes the same). The
// packaging specs pin these names; the room's door for the other rooms is index.ts, which offers them more.

export {
  type ErrorBody,
  ErrorBodySchema,
  MAX_BODY_BYTES,
  NONCE_HEADER,
  type Notification,
  NotificationSchema,
  NotifyReasonSchema,
  type ResumeRequest,
  ResumeRequestSchema,
  type ResumeResult,
  ResumeResultSchema,
  ROUTE_PREFIX,
  ROUTES,
  SIGNATURE_HEADER,
  type StatusResult,
  StatusResultSchema,
  SuspendBusySchema,
  SuspendDrainingSchema,
  SuspendReadySchema,
  type SuspendRequest,
  SuspendRequestSchema,
  type SuspendResult,
  SuspendResultSchema,
  SuspensionPhaseSchema,
  signNotification,
  TIMESTAMP_HEADER,
  type Wake,
  type WakeNotification,
  WakeNotificationSchema,
  WakeSchema,
  type WakeSnapshot,
  WakeSnapshotSchema,
  type Worker,
  WorkerSchema,
} from "../protocol/index.js";
export { type CheckpointInfo, checkpointsToDelete } from "./checkpoints.js";
export {
  type AbortRelease,
  GatewayClient,
  type GatewayClientOptions,
  GatewayHttpError,
  SuspendAbortedError,
  type SuspendOptions,
} from "./client.js";
export {
  DEFAULT_REPLAY_WINDOW_MS,
  MemoryNonceStore,
  type NonceStore,
  NonceStoreFullError,
  notificationKind,
  type VerifyFailure,
  type VerifyOptions,
  type VerifyResult,
  verifyNotification,
  verifyWakeNotification,
  type WakeVerifyResult,
} from "./verify.js";
export {
  CheckpointCleanupError,
  type SleepResult,
  sleepVm,
  type VmConnection,
  vmStatus,
  type WakeOptions,
  wakeVm,
} from "./vm.js";
export {
  FileWakeStore,
  type KeptWake,
  MemoryWakeStore,
  planWake,
  type WakeLimits,
  type WakePlan,
  WakeSchedule,
  type WakeStore,
  WakeStoreWriteError,
  wakeKey,
} from "./wake.js";
