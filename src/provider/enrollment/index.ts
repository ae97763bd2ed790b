// The door of the enrollment room: the enroller the provider uses by default, its options, and its errors.
export { type EnrollOnBox, NodeEnroller, type NodeEnrollerOptions } from "./driver.js";
export { EnrollmentTimeoutError, EnrollmentWaitError, NodeBootstrapError, RuntimeMissingError } from "./errors.js";
export { EnrollmentDescriptorError, NODE_ENGINES, NODE_ENGINES_TEXT, satisfiesEngines } from "./plan.js";
