// The door of the shared infrastructure every room above stands on and none owns: redaction (one place, on
// every path out), crash-safe JSON files of our own state, the worker types OpenClaw's contract implies, a
// private CA's certificates, temp dirs a process owns, the host's own addresses in one spelling, and the one
// secret scan (here or on a box, proving itself with a planted canary).
export {
  type CertificateRequest,
  type IssuedCertificates,
  issueCertificates,
  type LeafRequest,
  signLeaf,
} from "./certificates.js";
export {
  DamagedFileError,
  DurableFile,
  type DurableFileOptions,
  type DurableFormat,
  type DurableFs,
  type DurableLogger,
} from "./durable-file.js";
export { hostAddresses } from "./host-addresses.js";
export { embeddedIpv4, HostSpellingError, ipLiteral, type ParsedHost, parseHost, parseSubnet } from "./ip-literal.js";
export { createOwnedTempDir, isAlive, type OwnedTempDir, ownerPidOf } from "./owned-temp-dir.js";
export { forgetSecrets, knownSecretCount, messageOf, redact, registerSecret } from "./redact.js";
export {
  SECRET_SCAN_PROGRAM,
  SecretScanError,
  type SecretScanReport,
  type SecretScanRequest,
  type SecretScanSkip,
  scanHere,
  secretScanCommand,
  secretScanReport,
} from "./secret-scan.js";
export type {
  ExecutionMode,
  MaintainContext,
  NodeEnrollment,
  NodeRuntimePreparation,
  ProjectPreparation,
  ProviderLogger,
  ProvisionOptions,
} from "./worker-types.js";
