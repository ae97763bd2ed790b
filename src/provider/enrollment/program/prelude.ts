// The bootstrap program's opening: read the plan, take the secrets out of the environment before anything
// else runs, become the sandbox account when started as root (the secret-bearing runs are, so that no
// process of that account can read their /proc/<pid>/environ), and the helpers every step uses. The program is JavaScript for the sandbox's own Node (no
// imports beyond node:*), kept as source text so the provider can write it to the box; it avoids template
// literals so it can live inside one here.
export const PRELUDE = String.raw`
import { spawn } from "node:child_process";
import { createHash, randomBytes } from "node:crypto";
import * as fs from "node:fs";
import * as http from "node:http";
import * as https from "node:https";
import * as net from "node:net";
import * as os from "node:os";
import * as path from "node:path";
import { Transform } from "node:stream";
import { pipeline } from "node:stream/promises";
import * as tls from "node:tls";

// Secrets first: read and delete them, so no child (npm, the node) and no later step can see them.
const SECRETS = {
  token: process.env.OPENCLAW_VSB_BOOTSTRAP_TOKEN || "",
  setupCode: process.env.OPENCLAW_VSB_SETUP_CODE || "",
  workerToken: process.env.OPENCLAW_VSB_WORKER_TOKEN || "",
};
delete process.env.OPENCLAW_VSB_BOOTSTRAP_TOKEN;
delete process.env.OPENCLAW_VSB_SETUP_CODE;
delete process.env.OPENCLAW_VSB_WORKER_TOKEN;
const PLAN = JSON.parse(process.env.OPENCLAW_VSB_PLAN || "{}");
delete process.env.OPENCLAW_VSB_PLAN;
process.umask(0o077);

/** The account's passwd entry; the runs started as root act for it. */
function accountOf(name) {
  const fields = fs.readFileSync("/etc/passwd", "utf8").split("\n").map((line) => line.split(":")).find((f) => f[0] === name);
  if (!fields || !/^[0-9]+$/.test(fields[2]) || !/^[0-9]+$/.test(fields[3]) || !fields[5]) {
    throw new Error("the sandbox has no account " + JSON.stringify(name) + " in /etc/passwd");
  }
  return { name: name, uid: Number(fields[2]), gid: Number(fields[3]), home: fields[5] };
}
// Looked up here (HOME depends on it) but reported from inside the run, so a box without the account still ends
// with a failed line rather than no outcome at all.
let ACCOUNT = null;
let ACCOUNT_ERROR = null;
try {
  ACCOUNT = process.getuid() === 0 ? accountOf(PLAN.account) : null;
} catch (error) {
  ACCOUNT_ERROR = error;
}
const HOME = ACCOUNT ? ACCOUNT.home : os.homedir();
const RUNTIMES = path.join(HOME, ".openclaw-worker", "node-runtimes");
const RUNTIME = path.join(RUNTIMES, PLAN.artifact.sha256);
const STATE = path.join(HOME, ".openclaw", "cloud-workers", PLAN.leaseId);
const FILES = {
  pid: path.join(STATE, "node.pid"),
  log: path.join(STATE, "node.log"),
  runtime: path.join(STATE, "runtime"),
};
const cliOf = (runtime) => path.join(runtime, "node_modules", "openclaw", "openclaw.mjs");

/** One line of the protocol the provider reads (protocol.ts). Never carries a secret. */
function emit(event) {
  process.stdout.write(JSON.stringify(Object.assign({ vsb: true }, event)) + "\n");
}

class StepFailure extends Error {
  constructor(phase, code, message) {
    super(message);
    this.phase = phase;
    this.code = code;
  }
}
const fail = (phase, code, message) => new StepFailure(phase, code, message);

async function timed(phase, run) {
  const started = Date.now();
  const detail = await run();
  emit({ event: "phase", phase: phase, ms: Date.now() - started, detail: detail === undefined ? null : detail });
  return detail;
}

/** The last bytes of a file, for error text and evidence; "" when absent. */
function tail(file, bytes) {
  try {
    const fd = fs.openSync(file, "r");
    try {
      const size = fs.fstatSync(fd).size;
      const length = Math.min(size, bytes);
      const buffer = Buffer.alloc(length);
      fs.readSync(fd, buffer, 0, length, size - length);
      return buffer.toString("utf8");
    } finally {
      fs.closeSync(fd);
    }
  } catch {
    return "";
  }
}

/** Runs a program to completion with output appended to a private log; resolves with its exit code. */
function runLogged(command, args, options) {
  return new Promise((resolve, reject) => {
    const log = fs.openSync(options.log, "a", 0o600);
    const child = spawn(command, args, {
      cwd: options.cwd,
      env: options.env,
      stdio: ["ignore", log, log],
    });
    fs.closeSync(log);
    const timer = setTimeout(() => child.kill("SIGKILL"), options.timeoutMs);
    child.once("error", (error) => {
      clearTimeout(timer);
      reject(error);
    });
    child.once("exit", (code, signal) => {
      clearTimeout(timer);
      resolve(code === null ? "signal " + signal : code);
    });
  });
}

function nodeVersionOk(version, engines) {
  const parts = version.replace(/^v/, "").split(/[.-]/).slice(0, 3).map(Number);
  if (parts.length < 3 || parts.some((n) => !Number.isInteger(n))) return false;
  const major = parts[0], minor = parts[1], patch = parts[2];
  return engines.some((range) => {
    const min = range.min;
    const atLeast = major !== min[0] ? major > min[0] : minor !== min[1] ? minor > min[1] : patch >= min[2];
    return atLeast && (range.belowMajor === undefined || major < range.belowMajor);
  });
}

/** Alive and not a zombie: a node that exited after its parent (this program) did may wait unreaped. */
function alive(pid) {
  try {
    process.kill(pid, 0);
  } catch (error) {
    if (error.code !== "EPERM") return false;
  }
  try {
    const stat = fs.readFileSync("/proc/" + pid + "/stat", "utf8");
    return !/^[0-9]+ \(.*\) [ZX] /s.test(stat);
  } catch {
    return false;
  }
}

function readPid() {
  try {
    const pid = Number(fs.readFileSync(FILES.pid, "utf8").trim());
    return Number.isSafeInteger(pid) && pid > 1 ? pid : 0;
  } catch {
    return 0;
  }
}

/**
 * Whether a live pid is a node this lease started: its environment names this lease's state directory (only
 * our launch sets that), and it runs an openclaw CLI from one of our runtimes, seen by its argv, or by its
 * working directory when openclaw retitled itself. Anything else is someone else's process, even if it
 * reuses the pid.
 */
function isOurs(pid) {
  try {
    const environ = fs.readFileSync("/proc/" + pid + "/environ", "utf8").split("\0");
    if (!environ.includes("OPENCLAW_STATE_DIR=" + STATE)) return false;
    const argv = fs.readFileSync("/proc/" + pid + "/cmdline", "utf8").split("\0");
    const cli = argv[1] || "";
    const runtime = path.dirname(path.dirname(path.dirname(cli)));
    if (path.dirname(runtime) === RUNTIMES && cli === cliOf(runtime)) return true;
    const titled = /^openclaw(-connect|-node)?$/.test(argv[0] || "");
    return titled && path.dirname(fs.readlinkSync("/proc/" + pid + "/cwd")) === RUNTIMES;
  } catch {
    return false;
  }
}
`;
