// Seed 002 "Lifecycle and snapshots": which phases run for each preparation or worker event, in order.
import { describe, expect, it } from "vitest";
import { type PreparationEvent, planPhases, resolveRecipe } from "../../src/devcontainer/index.js";
import { fromConfig, SCRIPT } from "./support.js";

const ALL = fromConfig({
  postStartCommand: "d",
  postCreateCommand: "c",
  updateContentCommand: "b",
  onCreateCommand: "a",
});

describe("phase plan", () => {
  it.each<[PreparationEvent, string, string[]]>([
    [
      "initial",
      "first preparation: onCreateCommand before updateContentCommand",
      ["onCreateCommand", "updateContentCommand"],
    ],
    ["refresh", "in-place refresh to a new commit: only updateContentCommand reruns", ["updateContentCommand"]],
    ["unchanged", "a verified checkout at the same commit skips preparation commands", []],
    [
      "worker-start",
      "every machine start: postCreateCommand, then postStartCommand, after binding",
      ["postCreateCommand", "postStartCommand"],
    ],
  ])("%s — %s", (event, _, phases) => {
    expect(planPhases(ALL, event)).toEqual(phases);
  });

  it("snapshot phases and post-binding phases never overlap", () => {
    // What preparation runs ends up in the snapshot; what a worker start runs never does.
    const prepared = new Set([...planPhases(ALL, "initial"), ...planPhases(ALL, "refresh")]);
    for (const phase of planPhases(ALL, "worker-start")) expect(prepared.has(phase)).toBe(false);
  });

  it.each<[string, Record<string, unknown>, PreparationEvent, string[]]>([
    ["initial without onCreateCommand", { updateContentCommand: "b" }, "initial", ["updateContentCommand"]],
    ["initial without updateContentCommand", { onCreateCommand: "a" }, "initial", ["onCreateCommand"]],
    ["refresh without updateContentCommand reruns nothing", { onCreateCommand: "a" }, "refresh", []],
    ["worker-start with only postStartCommand", { postStartCommand: "d" }, "worker-start", ["postStartCommand"]],
    ["worker-start with only postCreateCommand", { postCreateCommand: "c" }, "worker-start", ["postCreateCommand"]],
    [
      "a blank command is not a phase",
      { postCreateCommand: " ", postStartCommand: "d" },
      "worker-start",
      ["postStartCommand"],
    ],
  ])("only phases the recipe has: %s", (_, config, event, phases) => {
    expect(planPhases(fromConfig(config), event)).toEqual(phases);
  });

  it.each([
    ["the fallback script", { files: { [SCRIPT]: "#!/bin/sh\n" }, executables: [SCRIPT] }],
    ["the detected installer", { files: { "package-lock.json": "{}" } }],
  ])("%s runs on initial preparation and again on every checkout refresh, and never at worker start", (_, input) => {
    const recipe = resolveRecipe(input);
    expect(planPhases(recipe, "initial")).toEqual(["updateContentCommand"]);
    expect(planPhases(recipe, "refresh")).toEqual(["updateContentCommand"]);
    expect(planPhases(recipe, "unchanged")).toEqual([]);
    expect(planPhases(recipe, "worker-start")).toEqual([]);
  });

  it.each<PreparationEvent>(["initial", "refresh", "unchanged", "worker-start"])(
    "skipping setup and having no recipe run nothing on %s",
    (event) => {
      expect(planPhases(resolveRecipe({ files: { "package-lock.json": "{}" }, skipSetup: true }), event)).toEqual([]);
      expect(planPhases(resolveRecipe({ files: {} }), event)).toEqual([]);
      expect(planPhases(resolveRecipe({ files: { "bun.lock": "" } }), event)).toEqual([]);
    },
  );

  it("an unknown event is a programming error", () => {
    expect(() => planPhases(ALL, "reboot" as PreparationEvent)).toThrow(TypeError);
    expect(() => planPhases(ALL, "toString" as PreparationEvent)).toThrow(TypeError);
  });
});
