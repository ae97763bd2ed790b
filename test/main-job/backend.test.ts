import { describe, expect, it } from "vitest";
import { backendFrom } from "../../src/main-job/backend.js";

describe("which backend npm start targets", () => {
  it("is the embedded emulator without credentials, or with a token missing its team or project", () => {
    expect(backendFrom({})).toEqual({ kind: "embedded" });
    expect(backendFrom({ VERCEL_TOKEN: "t", VERCEL_TEAM_ID: "team_1" })).toEqual({ kind: "embedded" });
  });

  it("is Vercel with an OIDC token, or a token with team and project", () => {
    expect(backendFrom({ VERCEL_OIDC_TOKEN: "x" })).toEqual({ kind: "vercel", auth: "oidc" });
    expect(backendFrom({ VERCEL_TOKEN: "t", VERCEL_TEAM_ID: "team_1", VERCEL_PROJECT_ID: "prj_1" })).toEqual({
      kind: "vercel",
      auth: "token",
      teamId: "team_1",
      projectId: "prj_1",
    });
  });
});
