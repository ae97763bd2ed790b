// The door of the settings room: a profile's settings (the TypeBox schema and the pure parse into normalized
// values or a named error) and the duration spelling settings share. Pure: nothing here reads the environment
// or talks to Vercel.
export { durationMs } from "./duration.js";
export {
  type CredentialSource,
  DEFAULT_IMAGE_UNUSED_MS,
  DEFAULT_IMAGES_KEPT,
  DEFAULT_TIMEOUT_MS,
  type ImageSharing,
  type ProfileSettings,
  type ProfileSettingsInput,
  ProfileSettingsSchema,
  parseSettings,
  RUNTIMES,
  type SecretRef,
  SecretRefSchema,
  SettingsError,
  VCPU_CHOICES,
} from "./profile.js";
