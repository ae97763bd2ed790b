// The door of the Vercel seam: every call the provider, warm-image preparation and the CLI make to Vercel goes
// through the client here, with its credentials, fetch, retries and error classification. Nothing in this room
// knows about leases, images or OpenClaw.
export {
  BackendUnavailableError,
  type EmbeddedBackend,
  RestoreMismatchError,
  type SandboxBox,
  type SandboxHandle,
  type SandboxSdk,
  type SandboxSummary,
  VercelClient,
  type VercelClientOptions,
  type VercelProject,
} from "./client.js";
export {
  type Credentials,
  CredentialsError,
  defaultSecretResolver,
  resolveCredentials,
  type SecretResolver,
} from "./credentials.js";
export { classify, type FailureKind, isFailure, VercelApiError } from "./errors.js";
