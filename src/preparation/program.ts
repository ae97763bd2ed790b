// The preparation program: JavaScript for the sandbox's own Node (node:* imports only), kept as source text so
// the provider can write it to the box. It does what must happen on the box and nothing else:
// - `sync`: bring the prepared checkout to the admitted commit from core's pristine seed (its own repository,
//   so the seed stays pristine), and report the committed recipe inputs at that commit (contents read from
//   Git, not from a working tree a command may have touched) with the previous preparation's record;
// - `record`: remember that this commit was prepared with this recipe identity;
// - `scrub`: remove everything that identifies a node or a session before capture, keeping machine caches.
// It never receives a secret, and runs from the command line (`node --eval`), never from a file on the box.
// Every run prints one JSON line.

/** Files whose committed contents decide the recipe (seed 002), read at the admitted commit. */
export const RECIPE_INPUTS = [
  ".devcontainer/devcontainer.json",
  ".devcontainer.json",
  ".openclaw/worktree-setup.sh",
  "pnpm-lock.yaml",
  "yarn.lock",
  "package-lock.json",
  "bun.lock",
  "bun.lockb",
  "package.json",
  ".yarnrc.yml",
] as const;

/** Commands detection may ask about (`hasCommand`). */
export const PROBED_COMMANDS = ["bun", "corepack", "npm", "git"] as const;

export const PREPARATION_PROGRAM = String.raw`
import { spawnSync } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";

const INPUT = JSON.parse(process.env.OPENCLAW_VSB_PREPARATION || "{}");
delete process.env.OPENCLAW_VSB_PREPARATION;
process.umask(0o077);
const HOME = os.homedir();
const WORKER = path.join(HOME, ".openclaw-worker");
const ROOT = path.join(WORKER, "prepared", String(INPUT.project || "").replace(/[^a-z0-9]/g, ""));
const CHECKOUT = path.join(ROOT, "checkout");
const RECORD = path.join(ROOT, "record.json");
const GIT_ENV = Object.assign({}, process.env, {
  GIT_CONFIG_NOSYSTEM: "1",
  GIT_CONFIG_GLOBAL: os.devNull,
  GIT_TERMINAL_PROMPT: "0",
});

function git(args, options) {
  const result = spawnSync("git", ["-c", "core.hooksPath=" + os.devNull, "-c", "credential.helper=", "-C", CHECKOUT].concat(args), {
    env: GIT_ENV,
    encoding: options && options.buffer ? "buffer" : "utf8",
    maxBuffer: 64 * 1024 * 1024,
    timeout: 600000,
  });
  if (result.status !== 0) {
    const said = String(result.stderr || (result.error && result.error.message) || "exit " + result.status).trim();
    throw new Error("git " + args[0] + " failed in the prepared checkout: " + said.slice(0, 500));
  }
  return options && options.buffer ? result.stdout : result.stdout.trim();
}

function findSeed() {
  const seeds = path.join(WORKER, "git-seeds");
  for (const namespace of fs.existsSync(seeds) ? fs.readdirSync(seeds) : []) {
    const seed = path.join(seeds, namespace, INPUT.seedKey);
    if (fs.existsSync(path.join(seed, ".git"))) return seed;
  }
  throw new Error("core's prepared seed " + INPUT.seedKey + " is not on the sandbox; replay the operation");
}

function readRecord() {
  try {
    const record = JSON.parse(fs.readFileSync(RECORD, "utf8"));
    return typeof record.baseCommit === "string" && typeof record.identity === "string" ? record : null;
  } catch {
    return null;
  }
}

function hasCommand(name) {
  return spawnSync("sh", ["-c", 'command -v "$1" >/dev/null 2>&1', "sh", name]).status === 0;
}

function sync() {
  const seed = findSeed();
  fs.mkdirSync(ROOT, { recursive: true, mode: 0o700 });
  let record = readRecord();
  if (!fs.existsSync(path.join(CHECKOUT, ".git"))) {
    fs.rmSync(CHECKOUT, { recursive: true, force: true });
    fs.mkdirSync(CHECKOUT, { mode: 0o700 });
    git(["init", "--quiet", "--object-format=" + (INPUT.baseCommit.length === 40 ? "sha1" : "sha256")]);
    record = null;
  }
  // The seed's HEAD is the admitted commit (core checks out exactly that); fetch it into our own repository.
  git(["fetch", "--quiet", "--no-tags", "--depth=1", seed, "HEAD"]);
  const fetched = git(["rev-parse", "FETCH_HEAD"]);
  if (fetched !== INPUT.baseCommit) throw new Error("the seed holds " + fetched + ", not the admitted commit " + INPUT.baseCommit);
  git(["checkout", "--quiet", "--detach", "--force", INPUT.baseCommit]);
  if (git(["rev-parse", "HEAD"]) !== INPUT.baseCommit) throw new Error("the prepared checkout did not move to " + INPUT.baseCommit);
  const files = {};
  const executables = [];
  const listed = git(["ls-tree", "-z", INPUT.baseCommit, "--"].concat(INPUT.inputs));
  for (const entry of listed.split("\0").filter(Boolean)) {
    const [meta, name] = entry.split("\t");
    const [mode, type, blob] = meta.split(" ");
    if (type !== "blob" || mode === "120000") continue;
    files[name] = git(["cat-file", "blob", blob], { buffer: true }).toString("base64");
    if (mode === "100755") executables.push(name);
  }
  const commands = {};
  for (const name of INPUT.commands) commands[name] = hasCommand(name);
  return { checkout: CHECKOUT, previous: record, files: files, executables: executables, commands: commands };
}

function record() {
  fs.mkdirSync(ROOT, { recursive: true, mode: 0o700 });
  const temp = RECORD + ".tmp";
  fs.writeFileSync(temp, JSON.stringify({ baseCommit: INPUT.baseCommit, identity: INPUT.identity, at: Date.now() }));
  fs.renameSync(temp, RECORD);
  return { recorded: true };
}

/** Ends our node processes (by the pid files our bootstrap writes), then removes identity and session state. */
function scrub() {
  const workers = path.join(HOME, ".openclaw", "cloud-workers");
  let stopped = 0;
  for (const lease of fs.existsSync(workers) ? fs.readdirSync(workers) : []) {
    const pid = Number.parseInt(String(safeRead(path.join(workers, lease, "node.pid"))), 10);
    if (Number.isInteger(pid) && pid > 1) {
      try {
        process.kill(-pid, "SIGKILL");
        stopped += 1;
      } catch {}
    }
  }
  const removed = [];
  for (const target of INPUT.remove) {
    const absolute = target.startsWith("~/") ? path.join(HOME, target.slice(2)) : target;
    if (fs.existsSync(absolute)) {
      fs.rmSync(absolute, { recursive: true, force: true });
      removed.push(target);
    }
  }
  return { stopped: stopped, removed: removed };
}

function safeRead(file) {
  try {
    return fs.readFileSync(file, "utf8");
  } catch {
    return "";
  }
}

try {
  const actions = { sync: sync, record: record, scrub: scrub };
  const run = actions[INPUT.action];
  if (!run) throw new Error("unknown action " + INPUT.action);
  process.stdout.write(JSON.stringify({ ok: true, result: run() }) + "\n");
} catch (error) {
  process.stdout.write(JSON.stringify({ ok: false, message: String(error && error.message ? error.message : error) }) + "\n");
  process.exitCode = 1;
}
`;

export const PREPARATION_ENV = "OPENCLAW_VSB_PREPARATION";

/**
 * What the scrub removes before capture: node identities, device tokens, session state and setup codes (all
 * under ~/.openclaw), session workspaces, our programs, and shell and REPL histories. Kept on purpose: npm
 * caches, ~/.openclaw-worker/node-runtimes (with the published worker archive), git-seeds and prepared.
 * /tmp/openclaw-vercel-sandbox held older providers' programs and our project scripts.
 */
export const SCRUBBED_PATHS = [
  "~/.openclaw",
  "~/.openclaw-worker/workspaces",
  "/tmp/openclaw-vercel-sandbox",
  "~/.bash_history",
  "~/.sh_history",
  "~/.ash_history",
  "~/.zsh_history",
  "~/.node_repl_history",
  "~/.python_history",
  "~/.lesshst",
  "~/.viminfo",
] as const;
