// The version of the OpenClaw this CLI runs in, read from the package the plugin resolves `openclaw` to (the
// peer, the gateway's own install). Its package.json is not an export, so it is found beside the resolved entry.
// Undefined when it cannot be read: a caller then takes no shortcut that depends on it.
import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

export function installedOpenClawVersion(
  resolve: (specifier: string) => string = import.meta.resolve,
): string | undefined {
  try {
    let dir = dirname(fileURLToPath(resolve("openclaw")));
    for (let depth = 0; depth < 4; depth++, dir = dirname(dir)) {
      let text: string;
      try {
        text = readFileSync(join(dir, "package.json"), "utf8");
      } catch {
        continue;
      }
      const pkg = JSON.parse(text) as { name?: unknown; version?: unknown };
      if (pkg.name === "openclaw" && typeof pkg.version === "string") return pkg.version;
    }
  } catch {
    return undefined;
  }
  return undefined;
}
