// The door of the gateway's status method (`vercelSandbox.status`): it runs in the gateway process, which alone
// knows the keepalives, the idle clock and the worker cap; the CLI's `status` command reads it over the
// gateway's transport. The plugin entry registers it; the CLI imports only its name and shapes.
export { type GatewayStatus, gatewayStatus, type IdleStatus, registerStatusMethod, STATUS_METHOD } from "./method.js";
