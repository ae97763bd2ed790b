// The door of the wire protocol between the plugin (src/suspend, the resident side) and a host (src/host): the
// routes and bodies as TypeBox schemas, and the notification signature. Neither side owns it; both import it.
// docs/protocol.md says the same for hosts in other languages.
export * from "./protocol.js";
export {
  NONCE_HEADER,
  SIGNATURE_HEADER,
  signatureFor,
  signatureMatches,
  signNotification,
  TIMESTAMP_HEADER,
} from "./signature.js";
export * from "./wake.js";
export * from "./workers.js";
