// One secret scan for every place that looks for a leaked secret: on this machine (a run dir, VM1's layers in the
// emulator's data dir) and on a box (VM1's gateway tree, VM2's disk, an image), by the same program. It reads every
// regular file under its roots to the end, binary or not, any size, matches across read chunks; it follows no
// symlink (a link out of the tree is not the tree); it fails on anything it cannot read, unless the caller named
// that exact path or entry name, or that exact error code, with the reason to skip it. And it proves itself on
// every run: it plants a canary file holding a fresh random value in each root, scans, removes it, and fails when
// it did not find each canary where it planted it (a scan that finds nothing proves nothing unless it can find).
// The needles travel in the program's environment, never in argv; the program skips its own /proc entry.
import { spawn } from "node:child_process";

export interface SecretScanSkip {
  /** An exact absolute path not to descend into or read. */
  path?: string;
  /** An exact entry name (a directory or file anywhere under the roots) not to descend into or read. */
  name?: string;
  /** Why it may be skipped: reported with what was skipped. */
  why: string;
}

export interface SecretScanRequest {
  /** Absolute directories to scan (each gets a canary). */
  roots: string[];
  /** The values to look for, by a name that says what each is. */
  needles: Record<string, string>;
  skip?: SecretScanSkip[];
  /** Error codes (e.g. ENOENT: a file the gateway renamed while the scan walked) tolerated, with why. */
  tolerate?: Record<string, string>;
  /**
   * Entries owned by this uid that answer EACCES are skipped, with why (on the emulator's boxes: the host's own
   * files under the shared /usr, owned by ids the sandbox does not map, which no program in it could have written).
   */
  unreadableOwner?: { uid: number; why: string };
  /** Also read every process's environ and cmdline (the scan's own excepted). */
  processes?: boolean;
}

export interface SecretScanReport {
  /** Per needle name, the files (absolute) or `/proc/<pid>/{environ,cmdline}` holding it. */
  hits: Record<string, string[]>;
  /** The canary files it planted (one per root) and found again, before it removed them. */
  canaries: string[];
  /** Regular files read to the end (the canaries excepted). */
  filesRead: number;
  bytesRead: number;
  /** Entries that are no regular file (symlinks, sockets, FIFOs, devices): not read, not followed. */
  notFiles: number;
  /** Process entries read (environ and cmdline), when asked for. */
  processesRead: number;
  skipped: Array<{ path: string; why: string }>;
  tolerated: Array<{ path: string; code: string }>;
}

export class SecretScanError extends Error {
  override readonly name = "SecretScanError";
}

/** The environment variable the program reads its request from. */
export const SECRET_SCAN_ENV = "VSB_SECRET_SCAN";

/** The program (CommonJS, for `node -e`): the request in $VSB_SECRET_SCAN, the report as JSON on stdout. */
export const SECRET_SCAN_PROGRAM = `
"use strict";
const load = (name) => process.getBuiltinModule(name);
const fs = load("node:fs"), path = load("node:path"), crypto = load("node:crypto");
const req = JSON.parse(process.env.${SECRET_SCAN_ENV});
// Thrown, not exited: the planted canaries are removed on the way out whatever failed.
class ScanFailure extends Error {}
const fail = (message) => { throw new ScanFailure(message); };
const names = Object.keys(req.needles);
if (names.length === 0) fail("no needle");
for (const n of names) if (typeof req.needles[n] !== "string" || req.needles[n].length < 8) fail("needle " + n + " is shorter than 8 characters");
const canary = "vsb-scan-canary-" + crypto.randomBytes(16).toString("hex");
const needles = names.map((n) => [n, Buffer.from(req.needles[n])]).concat([["", Buffer.from(canary)]]);
const overlap = Math.max(...needles.map(([, b]) => b.length)) - 1;
const skipPaths = new Map((req.skip || []).filter((s) => s.path).map((s) => [s.path, s.why]));
const skipNames = new Map((req.skip || []).filter((s) => s.name).map((s) => [s.name, s.why]));
const tolerate = req.tolerate || {};
const report = { hits: Object.fromEntries(names.map((n) => [n, []])), canaries: [], filesRead: 0, bytesRead: 0, notFiles: 0, processesRead: 0, skipped: [], tolerated: [] };
const canaryFound = new Set();
const buf = Buffer.alloc(1 << 20);
const owner = req.unreadableOwner;
const tolerated = (file, error) => {
  if (error && error.code && tolerate[error.code] !== undefined) { report.tolerated.push({ path: file, code: error.code }); return true; }
  if (owner && error && error.code === "EACCES") {
    let uid; try { uid = fs.lstatSync(file).uid; } catch {}
    if (uid === owner.uid) { report.skipped.push({ path: file, why: owner.why }); return true; }
  }
  return false;
};
const note = (file, found) => { for (const n of found) if (n === "") canaryFound.add(file); else report.hits[n].push(file); };
// Every needle in the file's bytes, read to the end in 1 MiB chunks with the longest needle's overlap.
function readAll(file) {
  const found = new Set(); let tail = Buffer.alloc(0); let bytes = 0; let fd;
  try {
    fd = fs.openSync(file, "r");
    for (;;) {
      const n = fs.readSync(fd, buf, 0, buf.length, null);
      if (n === 0) break;
      bytes += n;
      const window = Buffer.concat([tail, buf.subarray(0, n)]);
      for (const [name, b] of needles) if (!found.has(name) && window.includes(b)) found.add(name);
      tail = window.subarray(Math.max(0, window.length - overlap));
    }
  } finally { if (fd !== undefined) fs.closeSync(fd); }
  return { found, bytes };
}
function walk(dir) {
  let entries;
  try { entries = fs.readdirSync(dir); } catch (error) { if (tolerated(dir, error)) return; fail("cannot read directory " + dir + ": " + error.code); }
  for (const entry of entries) {
    const full = path.join(dir, entry);
    const why = skipPaths.get(full) ?? skipNames.get(entry);
    if (why !== undefined) { report.skipped.push({ path: full, why }); continue; }
    let st;
    try { st = fs.lstatSync(full); } catch (error) { if (tolerated(full, error)) continue; fail("cannot stat " + full + ": " + error.code); }
    if (st.isDirectory()) { walk(full); continue; }
    if (!st.isFile()) { report.notFiles += 1; continue; }
    let got;
    try { got = readAll(full); } catch (error) { if (tolerated(full, error)) continue; fail("cannot read " + full + ": " + error.code); }
    note(full, got.found);
    if (!got.found.has("")) { report.filesRead += 1; report.bytesRead += got.bytes; }
  }
}
const planted = [];
try { scan(); } catch (error) {
  process.stderr.write("secret scan: " + (error instanceof ScanFailure ? error.message : error.stack) + "\\n");
  process.exitCode = 2;
} finally {
  for (const file of planted) { try { fs.unlinkSync(file); } catch {} }
}
function scan() {
  for (const root of req.roots) {
    if (!path.isAbsolute(root)) fail("a root must be absolute: " + root);
    let st; try { st = fs.lstatSync(root); } catch (error) { fail("cannot stat root " + root + ": " + error.code); }
    if (!st.isDirectory()) fail("a root must be a directory: " + root);
    // Binary around the value: NULs before and after, so a text-only read would miss it.
    const file = path.join(root, ".vsb-scan-canary-" + crypto.randomBytes(6).toString("hex"));
    fs.writeFileSync(file, Buffer.concat([Buffer.from([0, 1, 2, 255, 0]), Buffer.from(canary), Buffer.from([0, 254, 0])]), { flag: "wx", mode: 0o600 });
    planted.push(file);
  }
  if (planted.length === 0) fail("no root to scan");
  for (const root of req.roots) walk(root);
  if (req.processes) {
    for (const pid of fs.readdirSync("/proc").filter((p) => /^[0-9]+$/.test(p) && Number(p) !== process.pid)) {
      for (const what of ["environ", "cmdline"]) {
        const file = "/proc/" + pid + "/" + what;
        let got;
        try { got = readAll(file); } catch (error) {
          if (error.code === "ENOENT" || error.code === "ESRCH") { report.tolerated.push({ path: file, code: error.code }); continue; }
          fail("cannot read " + file + ": " + error.code);
        }
        note(file, got.found);
        report.processesRead += 1;
      }
    }
  }
  const missed = planted.filter((file) => !canaryFound.has(file));
  if (missed.length > 0) fail("it did not find its own canary in " + missed.join(", "));
  const stray = [...canaryFound].filter((f) => !planted.includes(f));
  if (stray.length > 0) fail("it found its canary where none was planted: " + stray.join(", "));
  report.canaries = planted;
  process.stdout.write(JSON.stringify(report));
}
`;

/** How to run the scan with any runner (this machine, a box): `node` with these args and this environment. */
export function secretScanCommand(request: SecretScanRequest): { args: string[]; env: Record<string, string> } {
  return { args: ["-e", SECRET_SCAN_PROGRAM], env: { [SECRET_SCAN_ENV]: JSON.stringify(request) } };
}

/** The report from the program's exit code and output; throws SecretScanError when it failed. */
export function secretScanReport(exitCode: number | null, stdout: string, stderr: string): SecretScanReport {
  if (exitCode !== 0) throw new SecretScanError(stderr.trim().slice(-800) || `the scan exited with ${exitCode}`);
  try {
    return JSON.parse(stdout) as SecretScanReport;
  } catch {
    throw new SecretScanError(`the scan printed no report: ${stdout.slice(0, 200)}`);
  }
}

/** Runs the scan on this machine (a child `node`, environment holding only the request). */
export function scanHere(request: SecretScanRequest): Promise<SecretScanReport> {
  const { args, env } = secretScanCommand(request);
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, args, { env, stdio: ["ignore", "pipe", "pipe"] });
    const [out, err]: [Buffer[], Buffer[]] = [[], []];
    child.stdout.on("data", (chunk: Buffer) => out.push(chunk));
    child.stderr.on("data", (chunk: Buffer) => err.push(chunk));
    child.once("error", reject);
    child.once("close", (code) => {
      try {
        resolve(secretScanReport(code, Buffer.concat(out).toString("utf8"), Buffer.concat(err).toString("utf8")));
      } catch (error) {
        reject(error);
      }
    });
  });
}
