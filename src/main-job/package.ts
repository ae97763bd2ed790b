// The plugin as a user gets it: `npm pack` of this checkout's built package (lifecycle scripts off: the package is
// what the build produced). The tarball is then installed on VM1 with `openclaw plugins install npm-pack:`.
import { execFile } from "node:child_process";
import { existsSync } from "node:fs";
import { readFile } from "node:fs/promises";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";

const run = promisify(execFile);

/** The checkout's root: the nearest directory above this module with the package's package.json. */
export function packageRoot(from = path.dirname(fileURLToPath(import.meta.url))): string {
  for (let dir = from; ; dir = path.dirname(dir)) {
    if (existsSync(path.join(dir, "package.json")) && existsSync(path.join(dir, "openclaw.plugin.json"))) return dir;
    if (path.dirname(dir) === dir) throw new Error(`no openclaw-vercel-sandbox checkout above ${from}`);
  }
}

export async function packPlugin(destination: string): Promise<{ fileName: string; bytes: Buffer }> {
  const root = packageRoot();
  if (!existsSync(path.join(root, "dist", "index.js"))) {
    throw new Error(`${root}/dist is missing: run \`npm run build\` first (npm start does)`);
  }
  const { stdout } = await run("npm", ["pack", "--json", "--pack-destination", destination], {
    cwd: root,
    env: { ...process.env, npm_config_ignore_scripts: "true", npm_config_update_notifier: "false" },
    maxBuffer: 16 * 1024 * 1024,
  });
  const fileName = (JSON.parse(stdout.slice(stdout.indexOf("["))) as Array<{ filename: string }>)[0]?.filename;
  if (!fileName) throw new Error(`npm pack printed no file name:\n${stdout.slice(0, 2000)}`);
  const base = path.basename(fileName);
  return { fileName: base, bytes: await readFile(path.join(destination, base)) };
}
