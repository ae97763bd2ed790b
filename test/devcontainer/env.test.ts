// Seed 002: containerEnv and remoteEnv give literal, non-secret strings to lifecycle commands only.
import { describe, expect, it } from "vitest";
import { DEVCONTAINER, fromConfig, fromDevcontainer, recipeErrorOf } from "./support.js";

const placeholder = (name: string) => `\${${name}}`;

describe("lifecycle environment", () => {
  it.each([
    {
      name: "containerEnv alone sets variables",
      config: { containerEnv: { A: "1", B: "two" } },
      env: { A: "1", B: "two" },
      unset: [],
    },
    {
      name: "remoteEnv overrides a matching containerEnv key and keeps the others",
      config: { containerEnv: { A: "container", B: "kept" }, remoteEnv: { A: "remote" } },
      env: { A: "remote", B: "kept" },
      unset: [],
    },
    {
      name: "a null remoteEnv value removes the variable, including one containerEnv set",
      config: { containerEnv: { A: "1", B: "2" }, remoteEnv: { A: null, PATH: null } },
      env: { B: "2" },
      unset: ["A", "PATH"],
    },
    {
      name: "a null containerEnv value removes the variable unless remoteEnv sets it again",
      config: { containerEnv: { A: null, B: null }, remoteEnv: { B: "back" } },
      env: { B: "back" },
      unset: ["A"],
    },
    {
      name: "values stay literal: no variable substitution",
      config: { remoteEnv: { P: `${placeholder("localEnv:PATH")}:/x`, H: "$HOME" } },
      env: { H: "$HOME", P: `${placeholder("localEnv:PATH")}:/x` },
      unset: [],
    },
    { name: "empty strings are literal values", config: { remoteEnv: { EMPTY: "" } }, env: { EMPTY: "" }, unset: [] },
    { name: "null properties contribute nothing", config: { containerEnv: null, remoteEnv: null }, env: {}, unset: [] },
    { name: "no environment properties mean an empty environment", config: {}, env: {}, unset: [] },
  ])("$name", ({ config, env, unset }) => {
    const recipe = fromConfig(config);
    expect(recipe.env).toEqual(env);
    expect(recipe.unset).toEqual(unset);
  });

  it("the environment belongs to the recipe's lifecycle commands, not to any session setting", () => {
    // The recipe has no session-facing field: env and unset are the whole of what setup may export.
    const recipe = fromConfig({ remoteEnv: { NODE_ENV: "development" }, postCreateCommand: "npm run build" });
    expect(Object.keys(recipe).sort()).toEqual(
      ["env", "file", "identity", "ignored", "ignoredNote", "notes", "phases", "source", "unset"].sort(),
    );
  });

  it("a repeated variable keeps its last value", () => {
    expect(fromDevcontainer('{ "remoteEnv": { "A": 1, "A": "ok" } }').env).toEqual({ A: "ok" });
  });

  it("a variable named __proto__ is an ordinary variable", () => {
    const recipe = fromDevcontainer('{ "remoteEnv": { "__proto__": "x" } }');
    expect(Object.hasOwn(recipe.env, "__proto__")).toBe(true);
    expect(Object.getOwnPropertyDescriptor(recipe.env, "__proto__")?.value).toBe("x");
  });

  it.each([
    ["a number value", '{ "remoteEnv": { "PORT": 3000 } }', "remoteEnv.PORT", "not a number (3000)"],
    ["a boolean value", '{ "containerEnv": { "CI": true } }', "containerEnv.CI", "not a boolean (true)"],
    ["an object value", '{ "remoteEnv": { "A": {} } }', "remoteEnv.A", "not an object"],
    ["an array value", '{ "remoteEnv": { "A": ["x"] } }', "remoteEnv.A", "not an array"],
    ["a NUL character in a value", '{ "remoteEnv": { "A": "a\\u0000" } }', "remoteEnv.A", "NUL"],
    ["an empty name", '{ "remoteEnv": { "": "x" } }', 'remoteEnv[""]', "not a usable variable name"],
    ["a name with =", '{ "remoteEnv": { "A=B": "x" } }', 'remoteEnv["A=B"]', "not a usable variable name"],
    ["an env property that is a string", '{ "containerEnv": "A=1" }', "containerEnv", "must be an object"],
    ["an env property that is an array", '{ "remoteEnv": [] }', "remoteEnv", "must be an object"],
  ])("%s is an error naming the property", (_, text, property, problem) => {
    const error = recipeErrorOf(() => fromDevcontainer(text));
    expect(error).toMatchObject({ file: DEVCONTAINER, property });
    expect(error.location).toBeDefined();
    expect(error.message).toContain(problem);
  });
});
