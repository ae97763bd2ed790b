// The Codex CLI the Codex specs drive: `@openai/codex` at the version `@openclaw/codex` 2026.9.5 pins, installed
// once from the registry into the machine cache (test/support/machine-cache.ts) under codex-cli/<version>-<key>,
// the key the digest of its manifest and the repo's .npmrc (its own small npm project with that .npmrc, so release
// age and strict install scripts stay on; the package has none), never into the root node_modules.
import { existsSync, readFileSync } from "node:fs";
import path from "node:path";
import { contentKey, machineCacheDir } from "../../support/machine-cache.js";
import { REPO_ROOT } from "../openclaw.js";
import { installStaged } from "../staged-install.js";

/** The `@openai/codex` that `@openclaw/codex@2026.9.5` depends on (its package.json). */
export const CODEX_CLI_VERSION = "0.154.0";

function manifestOf(version: string): string {
  const manifest = { name: "codex-cli-for-specs", private: true, dependencies: { "@openai/codex": version } };
  return `${JSON.stringify(manifest, null, 2)}\n`;
}

function prefixOf(version: string): string {
  const key = contentKey(manifestOf(version), readFileSync(path.join(REPO_ROOT, ".npmrc"), "utf8"));
  return path.join(machineCacheDir(), "codex-cli", `${version}-${key}`);
}

/** The native `codex` binary of the installed platform package (linux x64 only, as the test machines are). */
function nativeBinary(prefix: string): string {
  return path.join(
    prefix,
    "node_modules",
    "@openai",
    "codex-linux-x64",
    "vendor",
    "x86_64-unknown-linux-musl",
    "bin",
    "codex",
  );
}

/** Installs `@openai/codex@version` once (staging dir renamed into place) and returns its native binary. */
export async function ensureCodexCli(version = CODEX_CLI_VERSION): Promise<string> {
  if (process.platform !== "linux" || process.arch !== "x64") {
    throw new Error(`the Codex specs run on linux x64 only (this is ${process.platform} ${process.arch})`);
  }
  const prefix = prefixOf(version);
  if (existsSync(nativeBinary(prefix))) return nativeBinary(prefix);
  await installStaged({
    prefix,
    stagingPrefix: `${prefix}-staging-`,
    manifest: manifestOf(version),
    what: `@openai/codex@${version} (its native codex binary)`,
    complete: (dir) => existsSync(nativeBinary(dir)),
  });
  return nativeBinary(prefix);
}
