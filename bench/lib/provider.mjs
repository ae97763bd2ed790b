// What every bench section needs to drive the built provider against an emulator: a profile pointing at it,
// a provider factory with a quiet logger, and lease → sandbox names (the stand-in enrollment is stand-in.mjs's).
import { createVercelSandboxProvider } from "../../dist/provider/index.js";

export { operationId, standInEnroller, standInOptions } from "./stand-in.mjs";

export const TOKEN_ENV = "BENCH_VERCEL_TOKEN";
const quiet = { warn: () => undefined };

export const sandboxNameOfLease = (leaseId) => leaseId.replace(/^vsb_/, "openclaw-");

export function profileOf(api) {
  return { apiUrl: api.url, tokenEnv: TOKEN_ENV, teamId: api.credentials.teamId, projectId: api.credentials.projectId };
}

export function makeProvider(token, options = {}) {
  return createVercelSandboxProvider({ env: { [TOKEN_ENV]: token }, logger: quiet, ...options });
}
