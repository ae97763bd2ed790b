// The isolated openclaw config file: the minimal local-gateway config a run starts from, and plain reads and
// writes of it. It is the only place the gateway token is stored (see gateway-harness.ts for why).

import { randomBytes } from "node:crypto";
import fs from "node:fs/promises";
import path from "node:path";

/** Loopback-only gateway with token auth, logging to a file inside the run dir. */
export function initialConfig(port: number, token: string, logFile: string): Record<string, unknown> {
  return {
    gateway: { mode: "local", bind: "loopback", port, auth: { mode: "token", token } },
    logging: { file: logFile },
  };
}

export async function readConfig(configPath: string): Promise<Record<string, unknown>> {
  return JSON.parse(await fs.readFile(configPath, "utf8")) as Record<string, unknown>;
}

/** Writes the config owner-only: it holds the gateway token. */
export async function writeConfig(configPath: string, config: Record<string, unknown>): Promise<void> {
  await fs.writeFile(configPath, `${JSON.stringify(config, null, 2)}\n`, { mode: 0o600 });
}

/** Writes `patch` to a fresh JSON5-compatible file in `dir` for `openclaw config patch --file`; returns its path. */
export async function writePatchFile(dir: string, patch: unknown): Promise<string> {
  const file = path.join(dir, `patch-${randomBytes(4).toString("hex")}.json5`);
  await fs.writeFile(file, JSON.stringify(patch, null, 2), { mode: 0o600 });
  return file;
}
