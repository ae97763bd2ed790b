// The door of the provider room: the factory the plugin registers, and the types tests and hosts need.

export { type ProfileSettings, ProfileSettingsSchema, parseSettings, SettingsError } from "../settings/index.js";
export type {
  Credentials,
  EmbeddedBackend,
  SandboxHandle,
  SandboxSdk,
  SecretResolver,
  VercelClientOptions,
} from "../vercel/index.js";
export {
  createVercelSandboxProvider,
  type EnrollmentContext,
  type NodeEnroller,
  PROVIDER_ID,
  type ProvisionStep,
  type VercelSandboxProvider,
  type VercelSandboxProviderOptions,
} from "./provider.js";
