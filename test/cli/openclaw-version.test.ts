// The version `images warm` compares base images with: the installed peer's, found beside its resolved entry.
import { readFileSync } from "node:fs";
import { pathToFileURL } from "node:url";
import { describe, expect, it } from "vitest";
import { installedOpenClawVersion } from "../../src/cli/openclaw-version.js";

describe("installedOpenClawVersion", () => {
  it("reads the version of the openclaw package the plugin resolves", () => {
    const pkg = JSON.parse(readFileSync("node_modules/openclaw/package.json", "utf8")) as { version: string };
    expect(installedOpenClawVersion()).toBe(pkg.version);
  });

  it("is undefined when openclaw does not resolve, or resolves to a package of another name", () => {
    expect(
      installedOpenClawVersion(() => {
        throw new Error("Cannot find package 'openclaw'");
      }),
    ).toBeUndefined();
    const other = pathToFileURL(`${process.cwd()}/node_modules/undici/index.js`).href;
    expect(installedOpenClawVersion(() => other)).toBeUndefined();
  });
});
