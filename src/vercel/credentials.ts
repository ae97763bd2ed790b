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

/** The most of a token this reads: an OIDC token is a few KiB; anything far larger is not one. */
const MAX_OIDC_TOKEN_CHARS = 64 * 1024;

/**
 * The team and project an OIDC token names (payload `owner_id` / `project_id`), read the way the SDK reads
 * them. The signature is the API's to check; this only needs the ids, and refuses a token without them.
 */
export function oidcCredentials(token: string): Credentials {
  const payload = token.length <= MAX_OIDC_TOKEN_CHARS ? token.split(".")[1] : undefined;
  let claims: unknown;
  try {
    claims = payload ? JSON.parse(Buffer.from(payload, "base64url").toString("utf8")) : undefined;
  } catch {
    claims = undefined;
  }
  const { owner_id: teamId, project_id: projectId } = (claims ?? {}) as Record<string, unknown>;
  if (typeof teamId !== "string" || !teamId || typeof projectId !== "string" || !projectId) {
    throw new CredentialsError(
      "VERCEL_OIDC_TOKEN is not an OIDC token naming a team (owner_id) and a project (project_id)",
    );
  }
  return { token, teamId, projectId };
}

/**
 * `undefined` means OIDC from the process environment: the SDK reads VERCEL_OIDC_TOKEN (or the Vercel
 * request context) itself, refreshing it as it does. An environment of the caller's own (not
 * `process.env`) is one the SDK would never read, so its token is passed explicitly, read again at every call.
 */
export async function resolveCredentials(
  source: CredentialSource,
  env: NodeJS.ProcessEnv,
  resolveSecret: SecretResolver,
): Promise<Credentials | undefined> {
  if (source.kind === "oidc") {
    const token = env.VERCEL_OIDC_TOKEN;
    if (!token) {
      throw new CredentialsError(
        "no Vercel credentials: set VERCEL_OIDC_TOKEN for the gateway, or configure auth: token with tokenEnv",
      );
    }
    registerSecret(token);
    return env === process.env ? undefined : oidcCredentials(token);
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
