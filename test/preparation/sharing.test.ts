// images.shareBy as key.ts reads it: a commit-shared image never has the key a project-shared one was built
// under (so switching a profile to `commit` reuses no image a looser rule made).
import { describe, expect, it } from "vitest";
import { imageKeyOf, profileKeyOf } from "../../src/preparation/key.js";
import { parseSettings } from "../../src/settings/profile.js";

describe("image sharing", () => {
  const profileKey = profileKeyOf(parseSettings({ tokenEnv: "T", teamId: "team_a", projectId: "prj_a" }), 2);

  it("commit sharing keys images apart from project sharing; the project still tells keys apart", () => {
    const shared = imageKeyOf(profileKey, "p1");
    expect(imageKeyOf(profileKey, "p1", "project")).toBe(shared);
    expect(imageKeyOf(profileKey, "p1", "commit")).not.toBe(shared);
    expect(imageKeyOf(profileKey, "p2", "commit")).not.toBe(imageKeyOf(profileKey, "p1", "commit"));
  });
});
