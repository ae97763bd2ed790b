// The public subpaths resolve by package name to the built files, with the names users are told to import.
// The build is brought up to date first (ensureBuilt), so these specs never read a stale dist/.
import { beforeAll, describe, expect, it } from "vitest";
import { ensureBuilt } from "../setup/build.js";

beforeAll(() => ensureBuilt(), 300_000);

describe("package exports", () => {
  it.each([
    ["openclaw-vercel-sandbox/devcontainer", ["resolveRecipe", "planPhases", "RecipeError"]],
    ["openclaw-vercel-sandbox/emulator", ["startLocalSandboxApi", "EmulatorIsolationError"]],
    ["openclaw-vercel-sandbox/provider", ["createVercelSandboxProvider", "parseSettings", "ProfileSettingsSchema"]],
    ["openclaw-vercel-sandbox/conformance", ["defineConformanceSuite", "operationId", "fakeEnrollment"]],
    ["openclaw-vercel-sandbox/reference-host", ["createHost", "serve", "WakeTimer"]],
  ])("%s exports %j", async (specifier, names) => {
    const module = (await import(specifier)) as Record<string, unknown>;
    for (const name of names) expect(module[name], name).toBeDefined();
  });

  it("the root export is the plugin entry", async () => {
    // A variable specifier: type-checking runs before the build, when dist/ does not exist yet.
    const root = "openclaw-vercel-sandbox";
    const entry = (await import(root)) as { default: { id: string; register: unknown } };
    expect(entry.default.id).toBe("vercel-sandbox");
    expect(typeof entry.default.register).toBe("function");
  });
});
