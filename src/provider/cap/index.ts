// The door of the worker cap (`maxWorkers`): the gate, the provider wrapper, the refusals and the gateway-side
// interface the suspend room implements.
export { WorkerCapReachedError, WorkerCapReclaimError, WorkerCapReclaimingError } from "./errors.js";
export { type Admission, type CapSnapshot, type CountedLease, WorkerCap } from "./gate.js";
export type { CapWorker, Reclaimer, ReclaimOutcome } from "./types.js";
export { type CapOptions, withWorkerCap } from "./wrap.js";
