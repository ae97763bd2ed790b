import { describe, expect, it } from "vitest";
import { DEFAULT_TIMEOUT_MS, parseSettings, SettingsError } from "../../src/settings/profile.js";

function rejection(settings: unknown): SettingsError {
  try {
    parseSettings(settings);
  } catch (error) {
    if (error instanceof SettingsError) return error;
    throw error;
  }
  throw new Error("settings were accepted");
}

describe("profile settings", () => {
  it("an empty profile means OIDC, node24, 2 vCPUs, 30 minutes and deny-by-default egress", () => {
    expect(parseSettings({})).toEqual({
      backend: "vercel",
      apiUrl: undefined,
      credentials: { kind: "oidc" },
      runtime: "node24",
      vcpus: 2,
      timeoutMs: DEFAULT_TIMEOUT_MS,
      region: undefined,
      networkPolicy: { allow: [], allowCidrs: [] },
      ports: [],
      tags: {},
      snapshots: { expirationMs: undefined, keepLast: undefined },
      scope: undefined,
      capWaitMs: 5 * 60_000,
      warmImage: true,
      images: { keep: 2, unusedForMs: 14 * 24 * 60 * 60_000 },
      imageSharing: "project",
    });
  });

  it("a turn waits at the cap five minutes by default (capWait), at most thirty", () => {
    expect(parseSettings({ maxWorkers: 1, capWait: "90s" })).toMatchObject({ maxWorkers: 1, capWaitMs: 90_000 });
    expect(parseSettings({ capWait: 0 }).capWaitMs).toBe(0);
    expect(rejection({ capWait: "31m" }).message).toMatch(/capWait.*at most 30 minutes/);
    expect(rejection({ capWait: "soon" }).message).toMatch(/capWait/);
  });

  it("images can be shared by commit instead of by project; nothing else is accepted", () => {
    expect(parseSettings({ images: { shareBy: "commit" } }).imageSharing).toBe("commit");
    expect(parseSettings({ images: { shareBy: "project" } }).imageSharing).toBe("project");
    expect(() => parseSettings({ images: { shareBy: "recipe" } })).toThrow(/images\.shareBy/);
  });

  it("warm images can be turned off, and their retention tuned", () => {
    expect(parseSettings({ warmImage: false, images: { keep: 5, unusedFor: "3d" } })).toMatchObject({
      warmImage: false,
      images: { keep: 5, unusedForMs: 3 * 24 * 60 * 60_000 },
    });
    expect(() => parseSettings({ images: { keep: 0 } })).toThrow(/images\.keep/);
    expect(() => parseSettings({ warmImage: "yes" })).toThrow(/warmImage/);
  });

  it("a token reference implies token auth with team and project from the environment by default", () => {
    expect(parseSettings({ tokenEnv: "MY_TOKEN" }).credentials).toEqual({
      kind: "token",
      token: { env: "MY_TOKEN" },
      teamId: { env: "VERCEL_TEAM_ID" },
      projectId: { env: "VERCEL_PROJECT_ID" },
    });
    expect(
      parseSettings({ token: { source: "env", provider: "default", id: "T" }, teamId: "team_1", projectIdEnv: "P" })
        .credentials,
    ).toEqual({
      kind: "token",
      token: { ref: { source: "env", provider: "default", id: "T" } },
      teamId: { value: "team_1" },
      projectId: { env: "P" },
    });
    expect(parseSettings({ auth: "token" }).credentials).toMatchObject({ token: { env: "VERCEL_TOKEN" } });
  });

  it("durations accept milliseconds or unit strings", () => {
    expect(parseSettings({ timeout: "45m" }).timeoutMs).toBe(45 * 60_000);
    expect(parseSettings({ timeout: 120_000 }).timeoutMs).toBe(120_000);
    expect(parseSettings({ snapshots: { expiration: "7d", keepLast: 2 } }).snapshots).toEqual({
      expirationMs: 7 * 86_400_000,
      keepLast: 2,
    });
    expect(parseSettings({ snapshots: { expiration: 0 } }).snapshots.expirationMs).toBe(0);
  });

  it.each([
    [{ vcpus: 3 }, "vcpus", "one of 1, 2, 4, 8"],
    [{ runtime: "node20" }, "runtime", "one of node22, node24, node26"],
    [{ bogus: 1 }, "bogus", "not a known setting"],
    [{ snapshots: { keepLast: 2, extra: true } }, "snapshots.extra", "not a known setting"],
    [{ timeout: "10s" }, "timeout", "between 1 minute and 24 hours"],
    [{ timeout: "2 hours" }, "timeout", "duration"],
    [{ timeout: "25h" }, "timeout", "between 1 minute and 24 hours"],
    [{ tokenEnv: "not-an-env-name" }, "tokenEnv", "environment variable name"],
    [{ token: "inline-secret-value" }, "token", "invalid"],
    [{ token: { source: "exec", provider: "p", id: "x" } }, "token.source", "exec"],
    [{ token: { source: "env", provider: "d", id: "T" }, tokenEnv: "T" }, "token", "exclusive"],
    [{ teamId: "team_1" }, "teamId", 'only used with `auth: "token"`'],
    [{ auth: "token", teamId: "a", teamIdEnv: "B" }, "teamId", "exclusive"],
    [{ auth: "password" }, "auth", '"token" or "oidc"'],
    [{ ports: [80, 80] }, "ports", "invalid"],
    [{ ports: Array.from({ length: 16 }, (_, i) => 3000 + i) }, "ports", "invalid"],
    [{ tags: { a: "1", b: "2", c: "3" } }, "tags", "at most 2 tags"],
    [{ tags: { "openclaw-scope": "x" } }, "tags.openclaw-scope", "must not start with openclaw-"],
    [{ networkPolicy: "deny-all" }, "networkPolicy", '"allow-all" or'],
    [{ networkPolicy: { allow: ["bad domain"] } }, "networkPolicy.allow.0", "invalid"],
    [{ apiUrl: "ftp://example.com" }, "apiUrl", "invalid"],
    [{ apiUrl: "http://example.com" }, "apiUrl", "https unless it is loopback"],
    [{ apiUrl: "https://user:pw@example.com" }, "apiUrl", "credentials"],
    [{ scope: "Has Spaces" }, "scope", "invalid"],
    [{ backend: "local" }, "backend", '"vercel" or "embedded"'],
    [{ backend: "embedded", tokenEnv: "T" }, "tokenEnv", 'not used with `backend: "embedded"`'],
    [{ backend: "embedded", apiUrl: "http://127.0.0.1:1" }, "apiUrl", "not used with"],
    [{ region: "us-east" }, "region", "invalid"],
  ])("%j is rejected naming %s", (settings, key, reason) => {
    const error = rejection(settings);
    expect(error.key).toBe(key);
    expect(error.message).toContain(`\`${key}\``);
    expect(error.message).toContain(reason);
  });

  it("a rejected inline token is never echoed in the message", () => {
    expect(rejection({ token: "vercel_abcdef123456" }).message).not.toContain("vercel_abcdef123456");
  });

  it.each([null, undefined])("%s settings mean an empty profile", (value) => {
    expect(parseSettings(value).runtime).toBe("node24");
  });

  it.each([[[1, 2]], ["string"], [42]])("non-object settings %j are rejected", (value) => {
    expect(rejection(value).key).toBe("settings");
  });

  it("plain http is accepted for a loopback emulator and trailing slashes are dropped", () => {
    expect(parseSettings({ apiUrl: "http://127.0.0.1:4555/" }).apiUrl).toBe("http://127.0.0.1:4555");
    expect(parseSettings({ apiUrl: "https://vercel.com/api" }).apiUrl).toBe("https://vercel.com/api");
  });
});
