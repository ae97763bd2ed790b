// doctor's I/O checks against the emulator through the real SDK: credentials resolve from this process's
// environment (named, never printed), one tagged list proves token, team and project, and each failure
// carries what to do next. The gateway is an outside process: a stand-in answers (or refuses) its calls.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Check } from "../../src/cli/checks.js";
import { type DoctorInput, renderDoctor, runDoctor } from "../../src/cli/doctor.js";
import { vercelProfiles } from "../../src/cli/profiles.js";
import { type LocalSandboxApi, startLocalSandboxApi } from "../../src/emulator/index.js";
import { VercelClient } from "../../src/vercel/client.js";

let api: LocalSandboxApi;

beforeAll(async () => {
  api = await startLocalSandboxApi();
});
afterAll(async () => {
  await api?.close();
});

const refusingGateway = async () => {
  throw new Error("connect ECONNREFUSED 127.0.0.1:18789");
};

function input(env: NodeJS.ProcessEnv, extraProfiles: Record<string, unknown> = {}): DoctorInput {
  const settings = {
    apiUrl: api.url,
    tokenEnv: "DOC_TOKEN",
    teamId: api.credentials.teamId,
    projectId: api.credentials.projectId,
  };
  const config = {
    gateway: { publicOrigin: "https://gw.example.com" },
    cloudWorkers: { profiles: { vsb: { provider: "vercel-sandbox", settings }, ...extraProfiles } },
  };
  return {
    config,
    profiles: vercelProfiles(config, "doc-scope"),
    env,
    nodeVersion: "v24.22.3",
    client: new VercelClient({ env }),
    gateway: refusingGateway,
  };
}

const find = (checks: Check[], id: string, subject = "vsb") =>
  checks.find((c) => c.id === id && (c.subject === undefined || c.subject === subject));

describe("doctor", () => {
  it("passes credentials and Vercel with a good token, naming only where the token comes from", async () => {
    const report = await runDoctor(input({ DOC_TOKEN: api.credentials.token }));
    expect(find(report.checks, "credentials")).toMatchObject({
      status: "ok",
      message: "resolved (token from $DOC_TOKEN, team from settings, project from settings)",
    });
    expect(find(report.checks, "vercel")).toMatchObject({ status: "ok" });
    expect(find(report.checks, "vercel")?.message).toMatch(/0 sandbox\(es\) tagged with scope doc-scope/);
    expect(find(report.checks, "enrollment-origin")?.status).toBe("ok");
    expect(find(report.checks, "gateway")?.status).toBe("warn");
    expect(report).toMatchObject({ ok: true, status: "warn" });
    expect(JSON.stringify(report) + renderDoctor(report)).not.toContain(api.credentials.token);
  });

  it("fails credentials when the variable is unset, says to export it, and does not try Vercel", async () => {
    const report = await runDoctor(input({}));
    const check = find(report.checks, "credentials");
    expect(check?.status).toBe("fail");
    expect(check?.message).toBe(
      "token: environment variable DOC_TOKEN is not set for the gateway " +
        "(token from $DOC_TOKEN, team from settings, project from settings)",
    );
    expect(check?.remedy).toMatch(/Export the variable in the gateway's environment/);
    expect(find(report.checks, "vercel")?.status).toBe("skip");
    expect(report.ok).toBe(false);
    const text = renderDoctor(report);
    expect(text).toMatch(/^FAIL\s+credentials \(vsb\)/m);
    expect(text).toContain("What to do next:");
    expect(text).toContain("Doctor: some checks failed.");
    expect(text).toContain("token: environment variable DOC_TOKEN is not set for the gateway");
  });

  it("prints a multi-line result or remedy as lines, indented under its first", () => {
    const text = renderDoctor({
      ok: false,
      status: "fail",
      checks: [
        {
          id: "gateway",
          status: "fail",
          message: "the gateway did not answer\nGateway target: ws://127.0.0.1:18789",
          remedy: "Start the gateway\nor pass --url",
        },
      ],
    });
    const lines = text.split("\n");
    expect(lines).toContain("FAIL  gateway  the gateway did not answer");
    expect(lines).toContain("                 Gateway target: ws://127.0.0.1:18789");
    expect(lines).toContain("- gateway: Start the gateway");
    expect(lines).toContain("    or pass --url");
    expect(text).not.toContain("?");
  });

  it("fails Vercel when the token is refused, with the token remedy", async () => {
    const report = await runDoctor(input({ DOC_TOKEN: "not-the-token" }));
    const check = find(report.checks, "vercel");
    expect(check?.status).toBe("fail");
    expect(check?.remedy).toMatch(/The token was refused/);
  });

  it("skips Vercel checks for an embedded profile and reports its invalid neighbour by key", async () => {
    const report = await runDoctor(
      input(
        { DOC_TOKEN: api.credentials.token },
        {
          local: { provider: "vercel-sandbox", settings: { backend: "embedded" } },
          typo: { provider: "vercel-sandbox", settings: { timeOut: "5m" } },
        },
      ),
    );
    expect(find(report.checks, "credentials", "local")?.status).toBe("skip");
    expect(find(report.checks, "settings", "typo")).toMatchObject({
      status: "fail",
      remedy: expect.stringContaining("cloudWorkers.profiles.typo.settings.timeOut"),
    });
  });
});
