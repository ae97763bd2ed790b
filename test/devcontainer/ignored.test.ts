// Seed 002 "Ignored properties": container-specific or unsupported properties never fail preparation.
import { describe, expect, it } from "vitest";
import { fromConfig } from "./support.js";

const SEED_IGNORED = [
  "image",
  "build",
  "dockerComposeFile",
  "runArgs",
  "mounts",
  "remoteUser",
  "features",
  "hostRequirements",
  "secrets",
  "customizations",
];

describe("ignored properties", () => {
  it.each(SEED_IGNORED)("%s is ignored with a concise note, whatever its value", (property) => {
    for (const value of [42, "x", null, [1, { a: [] }], { nested: { deep: true } }]) {
      const recipe = fromConfig({ [property]: value, postCreateCommand: "make" });
      expect(recipe.ignored).toEqual([property]);
      expect(recipe.ignoredNote).toBe(`devcontainer ${property} ignored on cloud machines`);
      expect(recipe.phases).toEqual({ postCreateCommand: { kind: "shell", command: "make" } });
    }
  });

  it.each([
    ["postAttachCommand", "echo attach"],
    ["initializeCommand", "echo host"],
    ["waitFor", "postCreateCommand"],
    ["forwardPorts", [3000]],
    ["workspaceFolder", "/workspace"],
    ["some-future-property", { x: 1 }],
  ])("%s lies outside the subset and is ignored, not run", (property, value) => {
    const recipe = fromConfig({ [property]: value });
    expect(recipe.ignored).toEqual([property]);
    expect(recipe.phases).toEqual({});
  });

  it("every ignored property is listed sorted; the note puts the seed's properties first, in the seed's order", () => {
    const recipe = fromConfig({
      runArgs: [],
      image: "node",
      forwardPorts: [3000],
      features: {},
      postStartCommand: "x",
    });
    expect(recipe.ignored).toEqual(["features", "forwardPorts", "image", "runArgs"]);
    expect(recipe.ignoredNote).toBe("devcontainer image, runArgs, features, forwardPorts ignored on cloud machines");
  });

  it("properties outside the seed's list follow it, sorted", () => {
    const recipe = fromConfig({ zeta: 1, appPort: 1, customizations: {}, forwardPorts: [], mounts: [] });
    expect(recipe.ignoredNote).toBe(
      "devcontainer mounts, customizations, appPort, forwardPorts, zeta ignored on cloud machines",
    );
  });

  it("the note stays one short line when many properties are ignored, the seed's properties before any 'and N more'", () => {
    const config = Object.fromEntries(["aaa", "abc", ...SEED_IGNORED].map((name) => [name, 1]));
    const recipe = fromConfig(config);
    expect(recipe.ignored).toEqual(["aaa", "abc", ...SEED_IGNORED].sort());
    expect(recipe.ignoredNote).toBe(
      "devcontainer image, build, dockerComposeFile, runArgs, mounts, remoteUser and 6 more ignored on cloud machines",
    );
  });

  it("unfamiliar properties fill the note after the seed's ones, up to the limit", () => {
    const recipe = fromConfig({
      secrets: {},
      waitFor: "x",
      appPort: 1,
      otherPortsAttributes: {},
      shutdownAction: "none",
      forwardPorts: [],
      portsAttributes: {},
    });
    expect(recipe.ignoredNote).toBe(
      "devcontainer secrets, appPort, forwardPorts, otherPortsAttributes, portsAttributes, shutdownAction and 1 more ignored on cloud machines",
    );
  });

  it("name and $schema are descriptive metadata: neither ignored nor an error", () => {
    const recipe = fromConfig({ name: 7, $schema: "https://example.test/schema.json" });
    expect(recipe.ignored).toEqual([]);
    expect(recipe.ignoredNote).toBeUndefined();
  });

  it("the subset's own properties are never reported as ignored", () => {
    const recipe = fromConfig({
      onCreateCommand: "a",
      updateContentCommand: "b",
      postCreateCommand: "c",
      postStartCommand: "d",
      containerEnv: {},
      remoteEnv: {},
    });
    expect(recipe.ignored).toEqual([]);
    expect(recipe.ignoredNote).toBeUndefined();
  });

  it("detected, script and no-setup recipes carry no ignored note", () => {
    // Only a devcontainer file has properties to ignore; the other sources are covered in precedence tests.
    expect(fromConfig({}).ignoredNote).toBeUndefined();
  });
});
