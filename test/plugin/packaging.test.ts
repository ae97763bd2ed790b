// The plugin as the gateway sees it before loading any code: manifest, package metadata and the built entry.
import { existsSync, readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { pluginConfigJsonSchema } from "../../src/config.js";

const root = new URL("../../", import.meta.url);
const json = (path: string) => JSON.parse(readFileSync(new URL(path, root), "utf8"));

describe("plugin packaging", () => {
  const manifest = json("openclaw.plugin.json");
  const pkg = json("package.json");

  it("the manifest declares the worker provider contract and the TypeBox-generated config schema", () => {
    expect(manifest.id).toBe("vercel-sandbox");
    expect(manifest.contracts).toEqual({ workerProviders: ["vercel-sandbox"] });
    expect(manifest.configSchema).toEqual(pluginConfigJsonSchema());
  });

  it("openclaw is an exact peer and dev dependency, never a runtime dependency", () => {
    expect(pkg.peerDependencies.openclaw).toBe("2026.9.2");
    expect(pkg.devDependencies.openclaw).toBe("2026.9.2");
    expect(pkg.dependencies.openclaw).toBeUndefined();
    expect(pkg.openclaw).toMatchObject({
      extensions: ["./dist/index.js"],
      compat: { pluginApi: ">=2026.9.2" },
      build: { openclawVersion: "2026.9.2", pluginSdkVersion: "2026.9.2" },
    });
    expect(pkg.files).toEqual(expect.arrayContaining(["dist", "openclaw.plugin.json"]));
  });

  it("the built entry imports WorkerProviderError from the host instead of bundling a copy", () => {
    const entry = new URL("dist/index.js", root);
    expect(existsSync(entry), "run `npm run build` first").toBe(true);
    const built = ["dist/index.js", "dist/provider/index.js"]
      .map((p) => readFileSync(new URL(p, root), "utf8"))
      .join("\n");
    expect(built).not.toMatch(/class WorkerProviderError/);
    expect(readFileSync(entry, "utf8")).toMatch(/from "openclaw\/plugin-sdk\/plugin-entry"/);
  });
});
