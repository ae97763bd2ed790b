// Property-based specifications: whatever a repository commits, resolution ends quickly in either a recipe
// or a RecipeError, and the answer does not depend on formatting or on unrelated files.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { type Recipe, RecipeError, type ResolveInput, resolveRecipe } from "../../src/devcontainer/index.js";
import { DEVCONTAINER, ROOT_DEVCONTAINER, SCRIPT } from "./support.js";

const RUNS = { numRuns: 300 } as const;
const PHASES = ["onCreateCommand", "updateContentCommand", "postCreateCommand", "postStartCommand"];
const RECIPE_PATHS = [DEVCONTAINER, ROOT_DEVCONTAINER, SCRIPT];
const LOCKFILES = [
  "pnpm-lock.yaml",
  "yarn.lock",
  "package-lock.json",
  "bun.lock",
  "bun.lockb",
  ".yarnrc.yml",
  "package.json",
];

/** Resolves, returning the recipe or the RecipeError; any other throw escapes and fails the property. */
function outcome(input: ResolveInput): Recipe | RecipeError {
  try {
    return resolveRecipe(input);
  } catch (error) {
    if (error instanceof RecipeError) return error;
    throw error;
  }
}

/** Invariants every resolved recipe keeps, whatever produced it. */
function expectWellFormed(recipe: Recipe): void {
  expect(recipe.identity).toMatch(/^[0-9a-f]{64}$/);
  expect(["devcontainer", "script", "detected", "none"]).toContain(recipe.source);
  for (const phase of Object.keys(recipe.phases)) expect(PHASES).toContain(phase);
  for (const value of Object.values(recipe.env)) expect(typeof value).toBe("string");
  expect(recipe.ignored).toEqual([...recipe.ignored].sort());
  expect(recipe.ignoredNote === undefined).toBe(recipe.ignored.length === 0);
  for (const name of recipe.unset) expect(Object.hasOwn(recipe.env, name)).toBe(false);
}

// Text skewed towards JSONC's own punctuation so the parser meets every kind of broken input.
const jsoncNoise = fc
  .array(
    fc.oneof(
      fc.constantFrom("{", "}", "[", "]", ",", ":", '"', "//", "/*", "*/", "\n", "\\", "null", "true", "1e", "\uFEFF"),
      fc.constantFrom(...PHASES.map((p) => `"${p}"`), '"remoteEnv"', '"containerEnv"', '"image"'),
      fc.string({ maxLength: 8 }),
    ),
    { maxLength: 60 },
  )
  .map((parts) => parts.join(""));

const argv = fc
  .tuple(fc.stringMatching(/^[a-z][a-z-]{0,7}$/), fc.array(fc.string({ maxLength: 6 }), { maxLength: 3 }))
  .map(([executable, args]) => [executable, ...args]);
const commandValue = fc.oneof(
  fc.string({ maxLength: 20 }),
  argv,
  fc.dictionary(fc.string({ maxLength: 6 }), fc.oneof(fc.string({ maxLength: 10 }), argv), { maxKeys: 3 }),
);

/** A config whose lifecycle and env properties are well-typed, plus arbitrary other properties. */
const validConfig = fc.record(
  {
    onCreateCommand: commandValue,
    updateContentCommand: commandValue,
    postCreateCommand: commandValue,
    postStartCommand: commandValue,
    containerEnv: fc.dictionary(fc.stringMatching(/^[A-Z_][A-Z0-9_]{0,6}$/), fc.option(fc.string({ maxLength: 8 }))),
    remoteEnv: fc.dictionary(fc.stringMatching(/^[A-Z_][A-Z0-9_]{0,6}$/), fc.option(fc.string({ maxLength: 8 }))),
    image: fc.jsonValue({ maxDepth: 2 }),
    features: fc.jsonValue({ maxDepth: 2 }),
  },
  { requiredKeys: [] },
);

/** Renders JSON as JSONC: comments between tokens and trailing commas, without changing its meaning. */
function toJsonc(value: unknown, comment: (n: number) => string, depth = 0): string {
  const c = comment(depth);
  if (Array.isArray(value)) return `[${c}${value.map((v) => `${toJsonc(v, comment, depth + 1)},${c}`).join("")}]`;
  if (value !== null && typeof value === "object") {
    const body = Object.entries(value).map(
      ([k, v]) => `${JSON.stringify(k)}${c}:${toJsonc(v, comment, depth + 1)},${c}`,
    );
    return `{${c}${body.join("")}}`;
  }
  return JSON.stringify(value);
}

describe("resolver robustness (property-based)", () => {
  it("random JSONC-like text never crashes or hangs the resolver", () => {
    fc.assert(
      fc.property(jsoncNoise, fc.constantFrom(DEVCONTAINER, ROOT_DEVCONTAINER), (text, file) => {
        const result = outcome({ files: { [file]: text } });
        if (result instanceof RecipeError) {
          expect(result.file).toBe(file);
          expect(result.message.startsWith(file)).toBe(true);
        } else {
          expectWellFormed(result);
          expect(result.source).toBe("devcontainer");
        }
      }),
      RUNS,
    );
  });

  it("any JSON value in any known property gives a recipe or an error naming that property", () => {
    const property = fc.constantFrom(...PHASES, "containerEnv", "remoteEnv", "name", "image");
    fc.assert(
      fc.property(property, fc.jsonValue({ maxDepth: 4 }), (name, value) => {
        const result = outcome({ files: { [DEVCONTAINER]: JSON.stringify({ [name]: value }) } });
        if (result instanceof RecipeError) {
          expect(result.property === name || result.property?.startsWith(name)).toBe(true);
          expect(result.location).toBeDefined();
        } else {
          expectWellFormed(result);
        }
      }),
      RUNS,
    );
  });

  it("random file sets always give a recipe or a RecipeError about a devcontainer file", () => {
    const path = fc.oneof(fc.constantFrom(...RECIPE_PATHS, ...LOCKFILES), fc.string({ maxLength: 12 }));
    const content = fc.oneof(jsoncNoise, fc.uint8Array({ maxLength: 40 }), fc.constant("{}"));
    const input = fc.record({
      files: fc.dictionary(path, content, { maxKeys: 8 }),
      executables: fc.array(fc.oneof(fc.constant(SCRIPT), fc.string({ maxLength: 8 })), { maxLength: 3 }),
      bun: fc.boolean(),
      skipSetup: fc.boolean(),
    });
    fc.assert(
      fc.property(input, ({ files, executables, bun, skipSetup }) => {
        const result = outcome({ files, executables, skipSetup, hasCommand: (n) => bun && n === "bun" });
        if (result instanceof RecipeError) {
          expect([DEVCONTAINER, ROOT_DEVCONTAINER]).toContain(result.file);
        } else {
          expectWellFormed(result);
        }
      }),
      RUNS,
    );
  });

  it("comments and trailing commas never change the resolved recipe", () => {
    const comment = fc.func(fc.constantFrom("", " ", "/* c */", "// c\n", "\n\t"));
    fc.assert(
      fc.property(validConfig, comment, (config, commentAt) => {
        const plain = outcome({ files: { [DEVCONTAINER]: JSON.stringify(config) } });
        const jsonc = outcome({ files: { [DEVCONTAINER]: toJsonc(config, commentAt) } });
        if (plain instanceof RecipeError || jsonc instanceof RecipeError) {
          // A fault is a fault in either spelling, at the same property.
          expect(jsonc).toBeInstanceOf(RecipeError);
          expect(plain).toBeInstanceOf(RecipeError);
          expect((jsonc as RecipeError).property).toBe((plain as RecipeError).property);
          return;
        }
        // The identity follows the file's bytes, so only it may differ between the two spellings.
        const { identity: _a, ...plainRecipe } = plain;
        const { identity: _b, ...jsoncRecipe } = jsonc;
        expect(jsoncRecipe).toEqual(plainRecipe);
      }),
      RUNS,
    );
  });

  it("adding files no recipe reads never changes the recipe or its identity", () => {
    const recipeFiles = fc.dictionary(fc.constantFrom(...RECIPE_PATHS, ...LOCKFILES), fc.constantFrom("{}", "x", ""), {
      maxKeys: 5,
    });
    const unrelated = fc.dictionary(
      fc.string({ minLength: 1, maxLength: 10 }).map((name) => `src/${name}`),
      fc.string(),
      { maxKeys: 4 },
    );
    fc.assert(
      fc.property(recipeFiles, unrelated, fc.boolean(), (files, extra, executable) => {
        const executables = executable ? [SCRIPT] : [];
        const before = outcome({ files, executables });
        const after = outcome({ files: { ...extra, ...files }, executables });
        expect(after).toEqual(before);
      }),
      RUNS,
    );
  });
});
