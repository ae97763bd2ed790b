// Fuzz (issue 11, "Bad input"): 10 000 arbitrary repositories. Whatever is committed — any paths, bytes,
// JSONC noise, any JSON value under any devcontainer property, deep nesting, executables and PATH probes —
// resolveRecipe ends in a well-formed recipe or a RecipeError (nothing else is thrown), and planPhases on that
// recipe plans, for every event, only phases the recipe has, in the event's order. A hang fails by the test's
// timeout: the engine is pure and synchronous, so there is nothing else to wait for.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  type PreparationEvent,
  planPhases,
  type Recipe,
  RecipeError,
  type ResolveInput,
  resolveRecipe,
} from "../../src/devcontainer/index.js";
import { DEVCONTAINER, ROOT_DEVCONTAINER, SCRIPT } from "./support.js";

const CASES = 10_000;
const EVENTS: Record<PreparationEvent, string[]> = {
  initial: ["onCreateCommand", "updateContentCommand"],
  refresh: ["updateContentCommand"],
  unchanged: [],
  "worker-start": ["postCreateCommand", "postStartCommand"],
};
const PROPERTIES = [
  ...Object.values(EVENTS).flat(),
  "containerEnv",
  "remoteEnv",
  "name",
  "image",
  "features",
  "build",
  "dockerComposeFile",
  "customizations",
  "__proto__",
  "constructor",
];
const PATHS = [
  DEVCONTAINER,
  ROOT_DEVCONTAINER,
  SCRIPT,
  ".devcontainer/other/devcontainer.json",
  "package.json",
  "package-lock.json",
  "pnpm-lock.yaml",
  "yarn.lock",
  ".yarnrc.yml",
  "bun.lock",
  "bun.lockb",
];

/** A devcontainer-shaped document: known properties holding any JSON, some deeply nested. */
const devcontainerValue = fc.dictionary(fc.constantFrom(...PROPERTIES), fc.jsonValue({ maxDepth: 6 }), {
  maxKeys: 6,
});
const deepNesting = fc
  .tuple(fc.nat({ max: 2_000 }), fc.constantFrom("[", '{"a":'))
  .map(([depth, open]) => open.repeat(depth));
const content = fc.oneof(
  devcontainerValue.map((value) => JSON.stringify(value)),
  fc.jsonValue().map((value) => JSON.stringify(value)),
  fc.string({ unit: "binary", maxLength: 200 }),
  fc.uint8Array({ maxLength: 200 }),
  deepNesting,
  fc.constantFrom("", "{}", "[]", "null", "\uFEFF{}", "{/*", "// only a comment", '{"onCreateCommand": [] ,}'),
);
const input = fc.record({
  files: fc.dictionary(fc.oneof(fc.constantFrom(...PATHS), fc.string({ maxLength: 40 })), content, { maxKeys: 6 }),
  executables: fc.array(fc.oneof(fc.constantFrom(...PATHS), fc.string({ maxLength: 20 })), { maxLength: 4 }),
  commands: fc.array(fc.string({ maxLength: 8 }), { maxLength: 3 }),
  skipSetup: fc.option(fc.boolean(), { nil: undefined }),
});

function resolveOrError(resolve: ResolveInput): Recipe | RecipeError {
  try {
    return resolveRecipe(resolve);
  } catch (error) {
    if (error instanceof RecipeError) return error;
    throw error;
  }
}

describe("devcontainer engine fuzz", () => {
  it(`${CASES} arbitrary repositories give a recipe or a RecipeError, and plan only the recipe's phases`, {
    timeout: 300_000,
  }, () => {
    let recipes = 0;
    let errors = 0;
    fc.assert(
      fc.property(input, ({ files, executables, commands, skipSetup }) => {
        const result = resolveOrError({ files, executables, skipSetup, hasCommand: (name) => commands.includes(name) });
        if (result instanceof RecipeError) {
          errors += 1;
          expect(result.message.length).toBeGreaterThan(0);
          expect([DEVCONTAINER, ROOT_DEVCONTAINER]).toContain(result.file);
          return;
        }
        recipes += 1;
        expect(result.identity).toMatch(/^[0-9a-f]{64}$/);
        for (const [event, order] of Object.entries(EVENTS) as Array<[PreparationEvent, string[]]>) {
          const planned = planPhases(result, event);
          expect(planned).toEqual(
            order.filter((phase) => result.phases[phase as keyof Recipe["phases"]] !== undefined),
          );
        }
      }),
      { numRuns: CASES },
    );
    // Both outcomes were exercised: the generators reach valid recipes and faults alike.
    expect(recipes).toBeGreaterThan(0);
    expect(errors).toBeGreaterThan(0);
  });

  it("planPhases refuses an event it does not know with a TypeError naming it", () => {
    const recipe = resolveRecipe({ files: {} });
    fc.assert(
      fc.property(
        fc.string().filter((event) => !Object.hasOwn(EVENTS, event)),
        (event) => {
          expect(() => planPhases(recipe, event as PreparationEvent)).toThrow(TypeError);
        },
      ),
      { numRuns: 1_000 },
    );
  });
});
