// Seed 002: both devcontainer paths accept JSONC; syntax faults carry the file and a line:column.
import { describe, expect, it } from "vitest";
import { resolveRecipe } from "../../src/devcontainer/index.js";
import { DEVCONTAINER, fromDevcontainer, ROOT_DEVCONTAINER, recipeErrorOf } from "./support.js";

const SEED_EXAMPLE = `{
  "name": "Project tools",
  "updateContentCommand": ["npm", "ci"],
  "postCreateCommand": "npm run build",
  "postStartCommand": "npm run dev > /tmp/project-dev.log 2>&1 &",
  "remoteEnv": {
    "NODE_ENV": "development",
  },
}`;

describe("JSONC recipe files", () => {
  it.each([DEVCONTAINER, ROOT_DEVCONTAINER])("%s accepts the seed's minimal example with a trailing comma", (file) => {
    const recipe = resolveRecipe({ files: { [file]: SEED_EXAMPLE } });
    expect(recipe).toMatchObject({
      source: "devcontainer",
      file,
      phases: {
        updateContentCommand: { kind: "exec", argv: ["npm", "ci"] },
        postCreateCommand: { kind: "shell", command: "npm run build" },
        postStartCommand: { kind: "shell", command: "npm run dev > /tmp/project-dev.log 2>&1 &" },
      },
      env: { NODE_ENV: "development" },
      unset: [],
      ignored: [],
      ignoredNote: undefined,
      notes: [],
    });
  });

  it("accepts line and block comments anywhere", () => {
    const text = '// tools\n{ /* a */ "postCreateCommand": /* b */ "make", // c\n}\n/* end */';
    expect(fromDevcontainer(text).phases).toEqual({ postCreateCommand: { kind: "shell", command: "make" } });
  });

  it.each([
    ["a UTF-8 byte-order mark in bytes", new Uint8Array([0xef, 0xbb, 0xbf, ...new TextEncoder().encode("{}")])],
    ["a byte-order mark in text", "\uFEFF{}"],
    ["committed bytes", new TextEncoder().encode('{ "postStartCommand": "é" }')],
  ])("reads %s", (_, content) => {
    expect(resolveRecipe({ files: { [DEVCONTAINER]: content } }).source).toBe("devcontainer");
  });

  it.each([
    ["a missing value", '{\n  "postCreateCommand": \n}', "value expected", 3, 1],
    ["a missing comma", '{ "a": 1\n  "b": 2 }', "comma expected", 2, 3],
    ["an unclosed object", '{ "a": 1', "close brace expected", 1, 9],
    ["an unterminated string", '{ "a": "x', "unexpected end of string", 1, 8],
    ["an unterminated comment", "{ /* never closed", "unexpected end of comment", 1, 3],
    ["text after the value", "{} {}", "end of file expected", 1, 4],
    ["an empty file", "", "the file holds no JSON value", 1, 1],
    ["a file with only comments", "// nothing\n", "the file holds no JSON value", 1, 1],
    ["CRLF line ends", '{\r\n"a": 1\r\n"b": 2 }', "comma expected", 3, 1],
  ])("%s is an error with its line and column", (_, text, problem, line, column) => {
    const error = recipeErrorOf(() => fromDevcontainer(text));
    expect(error).toMatchObject({ file: DEVCONTAINER, location: { line, column }, property: undefined });
    expect(error.message).toContain(`${DEVCONTAINER}:${line}:${column}: `);
    expect(error.message).toContain(problem);
  });

  it.each([
    ["an array", "[]"],
    ["a string", '"npm ci"'],
    ["a number", "1"],
    ["null", "null"],
  ])("a root that is %s is an error asking for an object", (_, text) => {
    const error = recipeErrorOf(() => fromDevcontainer(text));
    expect(error).toMatchObject({ file: DEVCONTAINER, location: { line: 1, column: 1 } });
    expect(error.message).toContain("must hold a JSON object");
  });

  it("a non-object root is located where the value starts, after leading comments", () => {
    const error = recipeErrorOf(() => fromDevcontainer('// tools\n  ["npm", "ci"]'));
    expect(error.location).toEqual({ line: 2, column: 3 });
  });

  it("invalid UTF-8 bytes are an error", () => {
    const error = recipeErrorOf(() => resolveRecipe({ files: { [DEVCONTAINER]: new Uint8Array([0x7b, 0xff, 0x7d]) } }));
    expect(error.file).toBe(DEVCONTAINER);
    expect(error.message).toContain("not valid UTF-8");
  });

  it("absurdly deep nesting is an error, not a stack overflow", () => {
    const text = `{ "customizations": ${"[".repeat(100_000)} }`;
    const error = recipeErrorOf(() => fromDevcontainer(text));
    expect(error.message).toContain("nest deeper than");
  });
});
