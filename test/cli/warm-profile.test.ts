// Which profile `images warm` builds for (pure): the named one or the config's only one; an unknown, missing,
// ambiguous, invalid or warm-image-less profile is refused with what to do.
import { describe, expect, it } from "vitest";
import { vercelProfiles } from "../../src/cli/profiles.js";
import { chooseProfile } from "../../src/cli/warm.js";

const profile = (settings: Record<string, unknown>) => ({ provider: "vercel-sandbox", settings });
const VALID = { teamId: "team_1", projectId: "prj_1", tokenEnv: "VERCEL_TOKEN" };
const of = (profiles: Record<string, unknown>) => vercelProfiles({ cloudWorkers: { profiles } }, "scope");

describe("images warm: the profile", () => {
  it("is the named one, or the only one when none is named", () => {
    const two = of({ a: profile(VALID), b: profile({ ...VALID, vcpus: 4 }) });
    expect(chooseProfile(two, "b")).toMatchObject({ id: "b", settings: { vcpus: 4 } });
    expect(chooseProfile(of({ only: profile(VALID) }), undefined).id).toBe("only");
  });

  it("an unknown one is refused by name, with the known ones", () => {
    expect(() => chooseProfile(of({ a: profile(VALID) }), "nope")).toThrow(
      expect.objectContaining({
        message: 'no cloudWorkers profile "nope" uses provider vercel-sandbox',
        remedy: expect.stringContaining("(a)"),
      }),
    );
  });

  it("none, or several without --worker-profile, is refused", () => {
    expect(() => chooseProfile(of({}), undefined)).toThrow(/no cloudWorkers profile uses provider vercel-sandbox/);
    expect(() => chooseProfile(of({ a: profile(VALID), b: profile(VALID) }), undefined)).toThrow(
      expect.objectContaining({ remedy: "Name one with --worker-profile (a, b)" }),
    );
  });

  it("an invalid one, or one with warmImage: false, is refused", () => {
    expect(() => chooseProfile(of({ bad: profile({ ...VALID, vcpus: "many" }) }), "bad")).toThrow(
      /profile "bad" is invalid/,
    );
    expect(() => chooseProfile(of({ cold: profile({ ...VALID, warmImage: false }) }), "cold")).toThrow(
      /sets warmImage: false/,
    );
  });
});
