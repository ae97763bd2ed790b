// The door of the shared infrastructure every room above stands on and none owns: redaction (one place, on
// every path out), crash-safe JSON files of our own state, the worker types OpenClaw's contract implies, and a
// private CA's certificates.
export { type CertificateRequest, type IssuedCertificates, issueCertificates } from "./certificates.js";
export {
  DamagedFileError,
  DurableFile,
  type DurableFileOptions,
  type DurableFormat,
  type DurableFs,
  type DurableLogger,
} from "./durable-file.js";
export { forgetSecrets, knownSecretCount, messageOf, redact, registerSecret } from "./redact.js";
export type {
  ExecutionMode,
  MaintainContext,
  NodeEnrollment,
  NodeRuntimePreparation,
  ProjectPreparation,
  ProviderLogger,
  ProvisionOptions,
} from "./worker-types.js";
