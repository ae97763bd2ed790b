// The door of the provider room: the factory the plugin registers, and the types tests and hosts need.
export type { EmbeddedBackend, SandboxHandle, SandboxSdk, VercelClientOptions } from "./client.js";
export type { Credentials, SecretResolver } from "./credentials.js";
export {
  createVercelSandboxProvider,
  type EnrollmentContext,
  type NodeEnroller,
  PROVIDER_ID,
  type ProvisionStep,
  type VercelSandboxProvider,
  type VercelSandboxProviderOptions,
} from "./provider.js";
export { type ProfileSettings, ProfileSettingsSchema, parseSettings, SettingsError } from "./settings.js";
