import { describe, expect, it } from "vitest";
import { EmulatorTokenError, startLocalSandboxApi } from "../../src/emulator/index.js";
import { connect, raw, SDKS, useEmulator } from "./harness.js";

const emulator = useEmulator();
const WRONG_TOKEN = "emu_wrong_token_0123456789abcdef";

describe("the API refuses requests without the emulator's credentials (raw HTTP)", () => {
  it("a request without a token is 403 forbidden with missingToken, and the server keeps serving", async () => {
    const api = emulator();
    const refused = await raw(api, "GET", "/v2/sandboxes", undefined, { authorization: null });
    expect(refused.status).toBe(403);
    expect(refused.json.error).toMatchObject({ code: "forbidden", missingToken: true });
    const basic = await raw(api, "GET", "/v2/sandboxes", undefined, {
      authorization: `Basic ${api.credentials.token}`,
    });
    expect(basic.status).toBe(403);
    expect((await raw(api, "GET", "/v2/sandboxes")).status).toBe(200);
  });

  it("a wrong token is 403 forbidden with invalidToken and is never echoed", async () => {
    const api = emulator();
    const refused = await raw(api, "GET", "/v2/sandboxes", undefined, { authorization: `Bearer ${WRONG_TOKEN}` });
    expect(refused.status).toBe(403);
    expect(refused.json.error).toMatchObject({ code: "forbidden", invalidToken: true });
    expect(refused.text).not.toContain(WRONG_TOKEN);
    expect(refused.text).not.toContain(api.credentials.token);
    const prefix = await raw(api, "GET", "/v2/sandboxes", undefined, {
      authorization: `Bearer ${api.credentials.token.slice(0, -1)}`,
    });
    expect(prefix.status).toBe(403);
    expect((await raw(api, "GET", "/v2/sandboxes")).status).toBe(200);
  });

  it("another team, or no team, is 403 forbidden", async () => {
    const api = emulator();
    const other = await raw(api, "GET", "/v2/sandboxes", undefined, { teamId: "team_someone_else" });
    expect(other.status).toBe(403);
    expect(other.json.error?.code).toBe("forbidden");
    expect((await raw(api, "GET", "/v2/sandboxes", undefined, { teamId: null })).status).toBe(403);
  });

  it("another project is 404 not_found on every way the SDK names one", async () => {
    const api = emulator();
    const byQuery = await raw(api, "GET", "/v2/sandboxes/any-box?projectId=prj_other");
    expect(byQuery.status).toBe(404);
    expect(byQuery.json.error?.message).toContain("Project not found");
    expect((await raw(api, "GET", "/v2/sandboxes?project=prj_other")).status).toBe(404);
    const create = await raw(
      api,
      "POST",
      "/v3/sandboxes",
      JSON.stringify({ projectId: "prj_other", name: "elsewhere" }),
    );
    expect(create.status).toBe(404);
    const noProject = await raw(api, "POST", "/v3/sandboxes", JSON.stringify({ name: "nowhere" }));
    expect(noProject.status).toBe(400);
    const listed = await raw(api, "GET", `/v2/sandboxes?project=${api.credentials.projectId}`);
    expect(listed.status).toBe(200);
    expect((listed.json.sandboxes as Array<{ name: string }>).map((s) => s.name)).not.toContain("elsewhere");
  });

  it("refused requests change nothing, and the request log holds no credential", async () => {
    const api = emulator();
    const { Sandbox } = SDKS[1]![1];
    const sandbox = await Sandbox.create(connect(api));
    const path = `/v2/sandboxes/${sandbox.name}?projectId=${api.credentials.projectId}`;
    expect((await raw(api, "DELETE", path, undefined, { authorization: `Bearer ${WRONG_TOKEN}` })).status).toBe(403);
    expect((await raw(api, "DELETE", path, undefined, { teamId: "team_someone_else" })).status).toBe(403);
    expect((await raw(api, "GET", path)).status).toBe(200);
    const log = JSON.stringify(api.requests());
    expect(log).not.toContain(api.credentials.token);
    expect(log).not.toContain(WRONG_TOKEN);
    expect(log).not.toContain("teamId");
    await sandbox.delete();
  });

  it("a command inside a sandbox cannot use the API without the token, and does not have it", async () => {
    const api = emulator();
    const { Sandbox } = SDKS[1]![1];
    const sandbox = await Sandbox.create(connect(api));
    const probe = `fetch(${JSON.stringify(`${api.url}/v2/sandboxes?teamId=${api.credentials.teamId}`)})
      .then((r) => console.log(r.status), () => console.log("unreachable"))`;
    const result = await sandbox.runCommand("node", ["-e", probe]);
    expect(["403", "unreachable"]).toContain((await result.stdout()).trim());
    const env = await (await sandbox.runCommand("env")).stdout();
    expect(env).not.toContain(api.credentials.token);
    await sandbox.delete();
  });
});

describe.each(SDKS)("the SDK %s is refused with wrong credentials", (_version, { Sandbox, APIError }) => {
  it("a wrong token or team is a 403 APIError, another project a 404, and nothing is created", async () => {
    const api = emulator();
    const name = `auth-${_version.replace(/\W/g, "")}`;
    const wrongToken = await Sandbox.create({ ...connect(api), token: WRONG_TOKEN, name }).catch((e) => e);
    expect(wrongToken).toBeInstanceOf(APIError);
    expect(wrongToken.response.status).toBe(403);
    const wrongTeam = await Sandbox.create({ ...connect(api), teamId: "team_other", name }).catch((e) => e);
    expect(wrongTeam).toBeInstanceOf(APIError);
    expect(wrongTeam.response.status).toBe(403);
    const wrongProject = await Sandbox.create({ ...connect(api), projectId: "prj_other", name }).catch((e) => e);
    expect(wrongProject).toBeInstanceOf(APIError);
    expect(wrongProject.response.status).toBe(404);
    const missing = await Sandbox.get({ ...connect(api), name }).catch((e) => e);
    expect(missing.response.status).toBe(404);
    const sandbox = await Sandbox.create({ ...connect(api), name });
    const foreign = await Sandbox.get({ ...connect(api), projectId: "prj_other", name }).catch((e) => e);
    expect(foreign).toBeInstanceOf(APIError);
    expect(foreign.response.status).toBe(404);
    expect((await Sandbox.get({ ...connect(api), name })).status).toBe("running");
    await sandbox.delete();
  });
});

describe("the emulator's token", () => {
  it("is random per instance: one emulator's token does not open another", async () => {
    const first = emulator();
    const second = await startLocalSandboxApi();
    try {
      expect(second.credentials.token).not.toBe(first.credentials.token);
      const crossed = await raw(second, "GET", "/v2/sandboxes", undefined, {
        authorization: `Bearer ${first.credentials.token}`,
      });
      expect(crossed.status).toBe(403);
      expect((await raw(second, "GET", "/v2/sandboxes")).status).toBe(200);
    } finally {
      await second.close();
    }
  });

  it("can be given in options, and a JWT-shaped or short one is refused without echoing it", async () => {
    const token = "emu_given_token_for_this_test_0001";
    const api = await startLocalSandboxApi({ token });
    try {
      expect(api.credentials.token).toBe(token);
      expect((await raw(api, "GET", "/v2/sandboxes")).status).toBe(200);
    } finally {
      await api.close();
    }
    const jwt = "eyJhbGciOiJub25lIn0.eyJvd25lcl9pZCI6InRlYW0ifQ.signature";
    const refused = await startLocalSandboxApi({ token: jwt }).catch((e) => e);
    expect(refused).toBeInstanceOf(EmulatorTokenError);
    expect(refused.message).not.toContain(jwt);
    await expect(startLocalSandboxApi({ token: "short" })).rejects.toThrow(EmulatorTokenError);
  });
});
