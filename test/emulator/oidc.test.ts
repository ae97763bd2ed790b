// OIDC credentials: the emulator issues its own signed, expiring JWT for its team and project, the
// unmodified SDK's no-credentials path (VERCEL_OIDC_TOKEN) works with it, and the provider's
// `auth: "oidc"` profile with `apiUrl` provisions end to end. Every other JWT is refused.
import { Sandbox } from "@vercel/sandbox";
import type { WorkerProfile } from "openclaw/plugin-sdk/plugin-entry";
import { afterEach, describe, expect, it } from "vitest";
import { enrollingOptions, operationId } from "../../src/conformance/fixtures.js";
import { sandboxNameOf } from "../../src/provider/allocation.js";
import { createVercelSandboxProvider } from "../../src/provider/index.js";
import { connect, raw, SDKS, useEmulator } from "./harness.js";

const emulator = useEmulator();
const saved = process.env.VERCEL_OIDC_TOKEN;
afterEach(() => {
  if (saved === undefined) delete process.env.VERCEL_OIDC_TOKEN;
  else process.env.VERCEL_OIDC_TOKEN = saved;
});

const claimsOf = (jwt: string) => JSON.parse(Buffer.from(jwt.split(".")[1]!, "base64url").toString("utf8"));
const segment = (value: object) => Buffer.from(JSON.stringify(value)).toString("base64url");
const bearer = (jwt: string) => ({ authorization: `Bearer ${jwt}` });

describe("the emulator's OIDC token", () => {
  it("carries the team and project and expires; it is never copied by a spread nor logged", async () => {
    const api = emulator();
    const jwt = api.credentials.oidcToken;
    const claims = claimsOf(jwt);
    expect(claims).toMatchObject({ owner_id: api.credentials.teamId, project_id: api.credentials.projectId });
    expect(claims.exp - claims.iat).toBe(12 * 60 * 60);
    expect({ ...api.credentials }).not.toHaveProperty("oidcToken");
    expect((await raw(api, "GET", "/v2/sandboxes", undefined, bearer(jwt))).status).toBe(200);
    expect(JSON.stringify(api.requests())).not.toContain(jwt);
  });

  it("refuses an unsigned, a forged, an expired and another project's JWT with 403", async () => {
    const api = emulator();
    const good = api.credentials.oidcToken;
    const [header, , signature] = good.split(".");
    const claims = claimsOf(good);
    const unsigned = `${segment({ alg: "none", typ: "JWT" })}.${segment(claims)}.`;
    const otherHeader = `${segment({ alg: "HS512", typ: "JWT", kid: "emulator" })}.${segment(claims)}.${signature}`;
    const forged = `${header}.${segment({ ...claims, exp: claims.exp + 3600 })}.${signature}`;
    for (const jwt of [unsigned, otherHeader, forged, api.issueOidcToken({ expiresInSeconds: -1 })]) {
      const refused = await raw(api, "GET", "/v2/sandboxes", undefined, bearer(jwt));
      expect(refused.status).toBe(403);
      expect(refused.json.error).toMatchObject({ code: "forbidden", invalidToken: true });
      expect(refused.text).not.toContain(jwt);
    }
    const expired = await raw(
      api,
      "GET",
      "/v2/sandboxes",
      undefined,
      bearer(api.issueOidcToken({ expiresInSeconds: 0 })),
    );
    expect(expired.json.error?.message).toContain("expired");
    const elsewhere = await raw(
      api,
      "GET",
      "/v2/sandboxes",
      undefined,
      bearer(api.issueOidcToken({ projectId: "prj_someone_else" })),
    );
    expect(elsewhere.status).toBe(403);
    expect(elsewhere.json.error?.code).toBe("forbidden");
    const otherTeam = api.issueOidcToken({ teamId: "team_someone_else" });
    const refusedTeam = await raw(api, "GET", "/v2/sandboxes", undefined, {
      ...bearer(otherTeam),
      teamId: "team_someone_else",
    });
    expect(refusedTeam.status).toBe(403);
  });
});

describe.each(SDKS)("SDK %s with VERCEL_OIDC_TOKEN and no credentials", (_version, sdk) => {
  it("creates, runs, lists and deletes with only the emulator's fetch", async () => {
    const api = emulator();
    process.env.VERCEL_OIDC_TOKEN = api.credentials.oidcToken;
    const sandbox = await sdk.Sandbox.create({ fetch: api.fetch });
    const done = await sandbox.runCommand("echo", ["via-oidc"]);
    expect(await done.stdout()).toBe("via-oidc\n");
    const listed = await (await sdk.Sandbox.list({ fetch: api.fetch })).toArray();
    expect(listed.map((s: { name: string }) => s.name)).toContain(sandbox.name);
    const again = await sdk.Sandbox.get({ fetch: api.fetch, name: sandbox.name });
    expect(again.status).toBe("running");
    await sandbox.delete();
  });

  it("follows the token in the environment before every request, as its refresh does", async () => {
    const api = emulator();
    process.env.VERCEL_OIDC_TOKEN = api.credentials.oidcToken;
    const sandbox = await sdk.Sandbox.create({ fetch: api.fetch });
    process.env.VERCEL_OIDC_TOKEN = api.issueOidcToken({ projectId: "prj_someone_else" });
    await expect(sandbox.runCommand("true", [])).rejects.toThrow(/403/);
    process.env.VERCEL_OIDC_TOKEN = api.issueOidcToken();
    expect((await sandbox.runCommand("true", [])).exitCode).toBe(0);
    await sandbox.delete();
  });
});

describe("a provider profile with auth: oidc and apiUrl", () => {
  it("provisions, inspects and destroys a lease on the emulator with only VERCEL_OIDC_TOKEN in its environment", async () => {
    const api = emulator();
    const token = api.credentials.oidcToken;
    // The provider's own environment, not the process's: the SDK never reads this one, so the
    // provider must pass its token on (it did not, and the SDK found no credentials).
    delete process.env.VERCEL_OIDC_TOKEN;
    const warnings: string[] = [];
    const provider = createVercelSandboxProvider({
      env: { VERCEL_OIDC_TOKEN: token },
      logger: { warn: (message: string) => warnings.push(message) },
      scope: "oidc",
      enroll: async ({ enrollment }) => enrollment.waitForDeviceId(),
    });
    const profile: WorkerProfile = { apiUrl: api.url, auth: "oidc", timeout: "2m" };
    try {
      const { leaseId } = await provider.provision(profile, operationId(), enrollingOptions());
      expect(await provider.inspect({ leaseId, profile })).toMatchObject({ status: "active" });
      const box = await Sandbox.get({ ...connect(api), name: sandboxNameOf(leaseId) });
      expect(box.status).toBe("running");
      await provider.destroy({ leaseId, profile });
      await expect(Sandbox.get({ ...connect(api), name: sandboxNameOf(leaseId) })).rejects.toThrow(/404/);
      expect(warnings.join("\n")).not.toContain(token);
    } finally {
      await provider.dispose();
    }
  }, 60_000);
});
