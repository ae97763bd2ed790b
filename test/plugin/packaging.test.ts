// The plugin as the gateway sees it before loading any code: manifest, package metadata and the built entry.
// The build (which also writes the manifest) is brought up to date first, so these specs never read a stale one.

import { existsSync, readFileSync } from "node:fs";
import { beforeAll, describe, expect, it } from "vitest";
import { CLI_DESCRIPTION } from "../../src/cli/index.js";
import { pluginConfigJsonSchema } from "../../src/config.js";
import { ensureBuilt, staleness } from "../setup/build.js";

const root = new URL("../../", import.meta.url);
const json = (path: string) => JSON.parse(readFileSync(new URL(path, root), "utf8"));

describe("plugin packaging", () => {
  // biome-ignore lint/suspicious/noExplicitAny: parsed JSON documents, checked field by field below
  let manifest: any;
  // biome-ignore lint/suspicious/noExplicitAny: parsed JSON documents, checked field by field below
  let pkg: any;
  beforeAll(async () => {
    await ensureBuilt();
    manifest = json("openclaw.plugin.json");
    pkg = json("package.json");
  }, 300_000);

  it("the build under test is newer than every source it is built from", () => {
    expect(staleness()).toBeUndefined();
  });

  it("the manifest declares the worker provider and gateway-dispatch contracts and the TypeBox-generated config schema", () => {
    expect(manifest.id).toBe("vercel-sandbox");
    // The suspend routes dispatch gateway.suspend.* inside authenticated requests, which needs the contract.
    expect(manifest.contracts).toEqual({
      workerProviders: ["vercel-sandbox"],
      gatewayMethodDispatch: ["authenticated-request"],
    });
    expect(manifest.configSchema).toEqual(pluginConfigJsonSchema());
    // Root help and routing read the CLI owner from the manifest, with the command's own description.
    expect(manifest.cliCommands).toEqual([
      { name: "vercel-sandbox", description: CLI_DESCRIPTION, hasSubcommands: true },
    ]);
  });

  it("openclaw is a peer over the tested 2026.9.x releases and an exact dev dependency, never a runtime dependency", () => {
    // Every release in the range runs the real-gateway specs (test/gateway/versions.ts); 2026.9.2 is the primary.
    expect(pkg.peerDependencies.openclaw).toBe(">=2026.9.2 <=2026.9.6");
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
    expect(existsSync(entry), "ensureBuilt() built dist/").toBe(true);
    const built = ["dist/index.js", "dist/provider/index.js"]
      .map((p) => readFileSync(new URL(p, root), "utf8"))
      .join("\n");
    expect(built).not.toMatch(/class WorkerProviderError/);
    expect(readFileSync(entry, "utf8")).toMatch(/from "openclaw\/plugin-sdk\/plugin-entry"/);
  });
});
