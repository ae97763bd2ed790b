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

  it("every ignored property is listed, sorted, and summarised in one note", () => {
    const recipe = fromConfig({ runArgs: [], image: "node", features: {}, postStartCommand: "x" });
    expect(recipe.ignored).toEqual(["features", "image", "runArgs"]);
    expect(recipe.ignoredNote).toBe("devcontainer features, image, runArgs ignored on cloud machines");
  });

  it("the note stays one short line when many properties are ignored", () => {
    const config = Object.fromEntries(SEED_IGNORED.map((name) => [name, 1]));
    const recipe = fromConfig(config);
    expect(recipe.ignored).toEqual([...SEED_IGNORED].sort());
    expect(recipe.ignoredNote).toBe(
      "devcontainer build, customizations, dockerComposeFile, features, hostRequirements, image and 4 more ignored on cloud machines",
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
