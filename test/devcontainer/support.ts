// Shared helpers for the recipe engine specifications: build file sets and capture RecipeErrors.
import { expect } from "vitest";
import { type Recipe, RecipeError, type ResolveInput, resolveRecipe } from "../../src/devcontainer/index.js";

export const DEVCONTAINER = ".devcontainer/devcontainer.json";
export const ROOT_DEVCONTAINER = ".devcontainer.json";
export const SCRIPT = ".openclaw/worktree-setup.sh";

/** Resolves a recipe from a `.devcontainer/devcontainer.json` with the given JSONC text. */
export function fromDevcontainer(text: string, extra: Partial<ResolveInput> = {}): Recipe {
  return resolveRecipe({ ...extra, files: { [DEVCONTAINER]: text, ...extra.files } });
}

/** Resolves a recipe from `.devcontainer/devcontainer.json` holding `value` as JSON. */
export function fromConfig(value: unknown): Recipe {
  return fromDevcontainer(JSON.stringify(value, null, 2));
}

/** Runs `resolve` and returns the RecipeError it throws; fails the test if it throws anything else. */
export function recipeErrorOf(resolve: () => unknown): RecipeError {
  try {
    resolve();
  } catch (error) {
    expect(error).toBeInstanceOf(RecipeError);
    return error as RecipeError;
  }
  throw new Error("expected a RecipeError, but the recipe resolved");
}
