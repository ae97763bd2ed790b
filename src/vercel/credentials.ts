// Turns a profile's credential *references* into the values the SDK needs, at call time. Values are
// registered with the redactor the moment they are read, so no later message can carry them.
import { readFile } from "node:fs/promises";
import { registerSecret } from "../infra/index.js";
import type { CredentialSource, SecretRef } from "../settings/index.js";

export interface Credentials {
  token: string;
  teamId: string;
  projectId: string;
}

export type SecretResolver = (ref: SecretRef) => Promise<string>;

/** Missing credentials are an operator problem that may be fixed without editing the profile: retryable. */
export class CredentialsError extends Error {
  override readonly name = "CredentialsError";
}

/** Resolves `env` refs from the process environment and `file` refs by reading the file. */
export function defaultSecretResolver(env: NodeJS.ProcessEnv): SecretResolver {
  return async (ref) => {
    if (ref.source === "env") {
      const value = env[ref.id];
      if (!value) throw new CredentialsError(`SecretRef env:${ref.id} is not set in the gateway environment`);
      return value;
    }
    if (ref.source === "file") {
      try {
        return (await readFile(ref.id, "utf8")).trim();
      } catch {
        throw new CredentialsError(`SecretRef file ${ref.id} cannot be read`);
      }
    }
    throw new CredentialsError(`SecretRef source ${ref.source} is not supported`);
  };
}

/** `undefined` means OIDC: the SDK reads VERCEL_OIDC_TOKEN (or the Vercel request context) itself. */
export async function resolveCredentials(
  source: CredentialSource,
  env: NodeJS.ProcessEnv,
  resolveSecret: SecretResolver,
): Promise<Credentials | undefined> {
  if (source.kind === "oidc") {
    if (!env.VERCEL_OIDC_TOKEN) {
      throw new CredentialsError(
        "no Vercel credentials: set VERCEL_OIDC_TOKEN for the gateway, or configure auth: token with tokenEnv",
      );
    }
    registerSecret(env.VERCEL_OIDC_TOKEN);
    return undefined;
  }
  const fromEnv = (name: string, what: string) => {
    const value = env[name];
    if (!value) throw new CredentialsError(`${what}: environment variable ${name} is not set for the gateway`);
    return value;
  };
  const token = "ref" in source.token ? await resolveSecret(source.token.ref) : fromEnv(source.token.env, "token");
  registerSecret(token);
  const teamId = "value" in source.teamId ? source.teamId.value : fromEnv(source.teamId.env, "teamId");
  const projectId = "value" in source.projectId ? source.projectId.value : fromEnv(source.projectId.env, "projectId");
  return { token, teamId, projectId };
}
