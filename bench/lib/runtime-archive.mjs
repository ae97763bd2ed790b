// The runtime archive of the base-image figure: the specs' fixture CLI (it enrolls against the stand-in
// gateway) packed as `openclaw` 2026.9.2 with the installed openclaw 2026.9.2's own `dependencies`, so the
// bootstrap's `npm install` fetches and installs the real runtime's dependency tree from the registry, as a
// cold worker does on Vercel. BENCH_RUNTIME=fixture packs the dependency-free fixture instead (offline).
import { execFileSync } from "node:child_process";
import { createHash } from "node:crypto";
import { copyFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

const ROOT = new URL("../../", import.meta.url);
const VERSION = "2026.9.2";

export function runtimeArchive(kind = process.env.BENCH_RUNTIME ?? "real") {
  const dir = mkdtempSync(join(tmpdir(), "bench-runtime-"));
  try {
    copyFileSync(new URL("test/provider/fixtures/openclaw-node/openclaw.mjs", ROOT), join(dir, "openclaw.mjs"));
    const real = JSON.parse(readFileSync(new URL("node_modules/openclaw/package.json", ROOT), "utf8"));
    if (real.version !== VERSION) throw new Error(`bench: node_modules/openclaw is ${real.version}, not ${VERSION}`);
    const dependencies = kind === "real" ? (real.dependencies ?? {}) : {};
    writeFileSync(
      join(dir, "package.json"),
      JSON.stringify({
        name: "openclaw",
        version: VERSION,
        type: "module",
        bin: { openclaw: "openclaw.mjs" },
        dependencies,
      }),
    );
    const name = execFileSync("npm", ["pack", "--silent", "--pack-destination", dir], { cwd: dir, encoding: "utf8" })
      .trim()
      .split("\n")
      .pop();
    const bytes = readFileSync(join(dir, name));
    return {
      bytes,
      sha256: createHash("sha256").update(bytes).digest("hex"),
      version: VERSION,
      kind,
      dependencies: Object.keys(dependencies).length,
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
