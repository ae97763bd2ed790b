// The door of the provider room for the other rooms: everything the package publishes (public.ts), and what
// sibling rooms need besides.

export { effectiveScope, leaseIdOf, sandboxNameOf, TAG_SCOPE } from "./allocation.js";
export {
  type CapSnapshot,
  type CapWorker,
  type LeaseCap,
  makeRoomForTurn,
  type Reclaimer,
  type SessionPlacement,
  WorkerCap,
  withWorkerCap,
} from "./cap/index.js";
export { NODE_ENGINES_TEXT, satisfiesEngines } from "./enrollment/index.js";
export { LeaseLedger, type Tombstone } from "./ledger.js";
export { egressPolicy } from "./policy.js";
export * from "./public.js";
export { type AbsenceProof, ReleaseUnprovenError, releaseSandbox } from "./release.js";
