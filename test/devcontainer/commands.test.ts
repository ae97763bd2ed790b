// Seed 002 "Each lifecycle command supports these forms": string → shell, array → exec, object → parallel.
import { describe, expect, it } from "vitest";
import type { PhaseName } from "../../src/devcontainer/index.js";
import { DEVCONTAINER, fromConfig, fromDevcontainer, recipeErrorOf } from "./support.js";

/** A devcontainer variable reference such as `${localEnv:HOME}`, spelled so it is plainly not a template. */
const placeholder = (name: string) => `\${${name}}`;

const PHASES: PhaseName[] = ["onCreateCommand", "updateContentCommand", "postCreateCommand", "postStartCommand"];

describe("lifecycle command forms", () => {
  describe.each(PHASES)("%s", (phase) => {
    it.each([
      [
        "a string runs through the shell",
        "npm run build && echo ok",
        { kind: "shell", command: "npm run build && echo ok" },
      ],
      [
        "an array is an executable and arguments without a shell",
        ["npm", "ci", ""],
        { kind: "exec", argv: ["npm", "ci", ""] },
      ],
      [
        "an object names commands that run in parallel",
        { server: "npm run dev &", deps: ["npm", "ci"] },
        {
          kind: "parallel",
          commands: {
            server: { kind: "shell", command: "npm run dev &" },
            deps: { kind: "exec", argv: ["npm", "ci"] },
          },
        },
      ],
    ])("%s", (_, value, expected) => {
      expect(fromConfig({ [phase]: value }).phases).toEqual({ [phase]: expected });
    });
  });

  it.each([
    ["null", null],
    ["a blank string", "  \n "],
    ["an empty object", {}],
    ["an object whose commands are all blank", { a: "", b: " " }],
  ])("%s declares nothing to run, so the phase is absent", (_, value) => {
    expect(fromConfig({ postCreateCommand: value }).phases).toEqual({});
  });

  it("a blank named command is dropped and the others still run in parallel", () => {
    expect(fromConfig({ postStartCommand: { a: "", b: "echo b" } }).phases).toEqual({
      postStartCommand: { kind: "parallel", commands: { b: { kind: "shell", command: "echo b" } } },
    });
  });

  it("commands stay literal: devcontainer variables are not substituted", () => {
    const text = `cd ${placeholder("containerWorkspaceFolder")} && echo ${placeholder("localEnv:HOME")} $HOME`;
    const argv = ["echo", placeholder("localEnv:HOME")];
    expect(fromConfig({ postCreateCommand: text, onCreateCommand: argv }).phases).toEqual({
      onCreateCommand: { kind: "exec", argv },
      postCreateCommand: { kind: "shell", command: text },
    });
  });

  it("a repeated property keeps its last value, as JSON.parse does", () => {
    const recipe = fromDevcontainer('{ "postCreateCommand": "first", "postCreateCommand": "second" }');
    expect(recipe.phases.postCreateCommand).toEqual({ kind: "shell", command: "second" });
  });

  it("a repeated named command keeps its last value in its first position", () => {
    const recipe = fromDevcontainer('{ "postCreateCommand": { "a": "1", "b": "2", "a": "3" } }');
    expect(recipe.phases.postCreateCommand).toEqual({
      kind: "parallel",
      commands: { a: { kind: "shell", command: "3" }, b: { kind: "shell", command: "2" } },
    });
    expect(Object.keys((recipe.phases.postCreateCommand as { commands: object }).commands)).toEqual(["a", "b"]);
  });

  it("a command named __proto__ is an ordinary named command", () => {
    const recipe = fromDevcontainer('{ "postCreateCommand": { "__proto__": "echo hi" } }');
    const parallel = recipe.phases.postCreateCommand as { commands: Record<string, unknown> };
    expect(Object.hasOwn(parallel.commands, "__proto__")).toBe(true);
  });
});

describe("wrong command types are errors that name the property", () => {
  it.each([
    ["a number", '{ "postCreateCommand": 42 }', "postCreateCommand", "not a number (42)", [1, 24]],
    ["a boolean", '{ "onCreateCommand": true }', "onCreateCommand", "not a boolean (true)", [1, 22]],
    ["an empty array", '{ "updateContentCommand": [] }', "updateContentCommand", "not an empty array", [1, 27]],
    ["a non-string argument", '{ "postStartCommand": ["npm", 1] }', "postStartCommand[1]", "must be a string", [1, 31]],
    [
      "a nested array argument",
      '{ "postStartCommand": ["npm", ["x"]] }',
      "postStartCommand[1]",
      "must be a string",
      [1, 31],
    ],
    ["a blank executable", '{ "postStartCommand": [" ", "x"] }', "postStartCommand", "names no executable", [1, 23]],
    [
      "a nested object",
      '{\n  "postCreateCommand": {\n    "build": { "x": "y" }\n  }\n}',
      "postCreateCommand.build",
      "must be a string or an array of strings, not an object",
      [3, 14],
    ],
    ["a null named command", '{ "postCreateCommand": { "a": null } }', "postCreateCommand.a", "not null", [1, 31]],
    [
      "a number named command",
      '{ "postCreateCommand": { "a b": 1 } }',
      'postCreateCommand["a b"]',
      "not a number",
      [1, 33],
    ],
    [
      "an empty array named command",
      '{ "postCreateCommand": { "a": [] } }',
      "postCreateCommand.a",
      "not an empty array",
      [1, 31],
    ],
    [
      "a bad argument inside a named command",
      '{ "postCreateCommand": { "a": ["x", {}] } }',
      "postCreateCommand.a[1]",
      "must be a string",
      [1, 37],
    ],
    ["a NUL character in a shell command", '{ "postCreateCommand": "a\\u0000b" }', "postCreateCommand", "NUL", [1, 24]],
    [
      "a NUL character in an argument",
      '{ "postCreateCommand": ["a\\u0000b"] }',
      "postCreateCommand[0]",
      "NUL",
      [1, 25],
    ],
  ])("%s", (_, text, property, problem, [line, column]) => {
    const error = recipeErrorOf(() => fromDevcontainer(text));
    expect(error).toMatchObject({ file: DEVCONTAINER, property, location: { line, column } });
    expect(error.message).toContain(problem);
    expect(error.message).toContain(`${DEVCONTAINER}:${line}:${column}: ${property}`);
    expect(error.message).toMatch(/commit again\.$/);
  });
});
