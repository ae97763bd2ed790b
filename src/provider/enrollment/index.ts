// The door of the enrollment room: the bootstrap enroller the provider uses by default (a class; the
// `NodeEnroller` function type callers may pass instead is in steps/enroll.ts), its options, and its errors.
export { BootstrapEnroller, type BootstrapEnrollerOptions, type EnrollOnBox } from "./driver.js";
export { EnrollmentTimeoutError, EnrollmentWaitError, NodeBootstrapError, RuntimeMissingError } from "./errors.js";
export { EnrollmentDescriptorError, NODE_ENGINES, NODE_ENGINES_TEXT, satisfiesEngines } from "./plan.js";
