// Installing the plugin the way a user would: `npm pack` of the built repo, then
// `openclaw plugins install npm-pack:<tgz>`, so the tests exercise the published package, not the source tree.

import fs from "node:fs/promises";
import path from "node:path";
import { ensureBuilt } from "../setup/build.js";
import { type CommandRunner, ocOk } from "./cli.js";
import { parseCliJson } from "./cli-output.js";
import { REPO_ROOT } from "./openclaw.js";
import type { RunResult } from "./processes.js";

/** `npm pack` of `dir` (the repo is built first if its build is stale) into `packDir`; returns the tarball path. */
export async function packPlugin(
  runner: CommandRunner,
  packDir: string,
  dir: string,
  timeoutMs: number,
): Promise<string> {
  await fs.mkdir(packDir, { recursive: true });
  if (dir === REPO_ROOT) await ensureBuilt();
  // `npm` from PATH; the isolated environment puts this Node first so npm runs on it. Lifecycle scripts are
  // off: the package is what the build produced (brought up to date above).
  const result = await runner.run("npm", ["pack", "--json", "--pack-destination", packDir], {
    timeoutMs,
    cwd: dir,
    env: { npm_config_ignore_scripts: "true" },
  });
  if (result.code !== 0) throw new Error(runner.describeFailure("npm pack", result));
  const packed = parseCliJson<Array<{ filename: string }>>(result.stdout);
  const filename = packed?.[0]?.filename;
  if (!filename) throw new Error(`npm pack printed no filename:\n${result.stdout}`);
  return path.join(packDir, path.basename(filename));
}

/** `openclaw plugins install npm-pack:<tgz> --force --accept-capabilities` (also enables the plugin). */
export function installPlugin(runner: CommandRunner, tarball: string, timeoutMs: number): Promise<RunResult> {
  return ocOk(runner, ["plugins", "install", `npm-pack:${tarball}`, "--force", "--accept-capabilities"], {
    timeoutMs,
  });
}
