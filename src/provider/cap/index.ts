// The door of the worker cap (`maxWorkers`): the gate, the provider wrapper, the refusals and the gateway-side
// interface the suspend room implements.

export { makeRoomForTurn, type TurnRoom, type TurnRoomOptions } from "./ahead.js";
export { WorkerCapReachedError, WorkerCapReclaimError, WorkerCapReclaimingError } from "./errors.js";
export {
  type Admission,
  AHEAD_POLL_MS,
  type AheadOptions,
  type AheadOutcome,
  type CapSnapshot,
  type CountedLease,
  type LeaseCap,
  WorkerCap,
} from "./gate.js";
export type { CapWorker, Reclaimer, ReclaimOutcome, SessionPlacement } from "./types.js";
export { type CapOptions, withWorkerCap } from "./wrap.js";
