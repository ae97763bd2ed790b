// `openclaw-vercel-sandbox/provider`, the provider's public entry (tsup.config.ts): the factory the plugin
// registers and the types tests and hosts need. The packaging specs pin these names; the room's door for the
// other rooms is index.ts, which offers them more.

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
