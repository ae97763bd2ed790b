import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { redact } from "../../src/infra/redact.js";
import { parseSettings } from "../../src/settings/profile.js";
import { CredentialsError, defaultSecretResolver, resolveCredentials } from "../../src/vercel/credentials.js";

const source = (settings: Record<string, unknown>) => parseSettings(settings).credentials;

describe("credentials are resolved from references at call time", () => {
  it("reads token, team and project from the named environment variables", async () => {
    const env = { T: "tok-env-123456", VERCEL_TEAM_ID: "team_e", VERCEL_PROJECT_ID: "prj_e" };
    expect(await resolveCredentials(source({ tokenEnv: "T" }), env, defaultSecretResolver(env))).toEqual({
      token: "tok-env-123456",
      teamId: "team_e",
      projectId: "prj_e",
    });
    expect(redact("echo tok-env-123456")).toBe("echo [redacted]");
  });

  it("resolves env and file SecretRefs", async () => {
    const dir = await mkdtemp(join(tmpdir(), "creds-"));
    try {
      const file = join(dir, "token");
      await writeFile(file, "tok-file-abcdef\n", { mode: 0o600 });
      const env = { FROM_ENV: "tok-ref-abcdef" };
      const resolve = defaultSecretResolver(env);
      const ids = { teamId: "team_1", projectId: "prj_1" };
      const viaEnv = source({ token: { source: "env", provider: "default", id: "FROM_ENV" }, ...ids });
      const viaFile = source({ token: { source: "file", provider: "default", id: file }, ...ids });
      expect((await resolveCredentials(viaEnv, env, resolve))?.token).toBe("tok-ref-abcdef");
      expect((await resolveCredentials(viaFile, env, resolve))?.token).toBe("tok-file-abcdef");
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it.each([
    [{ tokenEnv: "MISSING_TOKEN", teamId: "t", projectId: "p" }, "MISSING_TOKEN"],
    [{ tokenEnv: "T" }, "VERCEL_TEAM_ID"],
    [
      { token: { source: "file", provider: "default", id: "/nonexistent/token" }, teamId: "t", projectId: "p" },
      "/nonexistent/token",
    ],
    [{}, "VERCEL_OIDC_TOKEN"],
  ])("a missing credential %j is a retryable error naming %s, never a value", async (settings, named) => {
    const env = { T: "tok-present-999999" };
    const error = await resolveCredentials(source(settings), env, defaultSecretResolver(env)).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(CredentialsError);
    expect((error as Error).message).toContain(named);
    expect((error as Error).message).not.toContain("tok-present-999999");
  });

  it("OIDC from the process environment is left to the SDK (which refreshes it), and masked", async () => {
    const saved = process.env.VERCEL_OIDC_TOKEN;
    process.env.VERCEL_OIDC_TOKEN = "oidc-token-value-1234";
    try {
      const resolved = await resolveCredentials(source({}), process.env, defaultSecretResolver(process.env));
      expect(resolved).toBeUndefined();
    } finally {
      if (saved === undefined) delete process.env.VERCEL_OIDC_TOKEN;
      else process.env.VERCEL_OIDC_TOKEN = saved;
    }
    expect(redact("saw oidc-token-value-1234")).toBe("saw [redacted]");
  });

  const jwt = (claims: object) => ["e30", Buffer.from(JSON.stringify(claims)).toString("base64url"), "c2ln"].join(".");

  it("OIDC from an environment of the caller's own passes that token and the team and project it names", async () => {
    const token = jwt({ owner_id: "team_oidc", project_id: "prj_oidc" });
    const env = { VERCEL_OIDC_TOKEN: token };
    expect(await resolveCredentials(source({}), env, defaultSecretResolver(env))).toEqual({
      token,
      teamId: "team_oidc",
      projectId: "prj_oidc",
    });
  });

  it.each([
    ["not a JWT", "opaque-oidc-value-5678"],
    ["no project", jwt({ owner_id: "team_x" })],
    ["a payload that is not JSON", `e30.${Buffer.from("{not json").toString("base64url")}.c2ln`],
  ])("an OIDC token with %s is a CredentialsError naming what is missing, never the value", async (_what, token) => {
    const env = { VERCEL_OIDC_TOKEN: token };
    const error = await resolveCredentials(source({}), env, defaultSecretResolver(env)).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(CredentialsError);
    expect((error as Error).message).toContain("owner_id");
    expect((error as Error).message).not.toContain(token);
  });
});
