// What the job checks on the boxes themselves, so a reply is not taken on trust: the command's proof file is on
// VM2 and not on VM1, and its line holds what only running the command yields; which gateway process instance
// answers (a wake must start a fresh one); what the plugin logged for the worker it provisioned; that no secret
// reached VM1's gateway tree; and where, on this machine, VM1's disk and checkpoints are for a fuller scan.
import { existsSync } from "node:fs";
import { readdir } from "node:fs/promises";
import path from "node:path";
import type { Sandbox } from "@vercel/sandbox";
import { GatewayClient } from "../host/index.js";
import { type SecretScanReport, scanHere, secretScanCommand, secretScanReport } from "../infra/index.js";
import { GATEWAY_LOG, ROOT, sh } from "./vm1.js";

export const PROOF_FILE = "/tmp/main-job-proof.txt";

/**
 * The command the agent runs on the worker: it appends `<proof> <a×b> <8 hex digits of a random UUID of the worker's
 * kernel>` to the proof file and prints it. The product and the UUID are in no prompt, so an echo of the command
 * never matches. Spaces, not colons: OpenClaw masks `<6+ digits>:<20+ characters>` in tool output as a Telegram
 * token, which would cut the line the reply must carry.
 */
export function proofCommand(proof: string, a: number, b: number, file = PROOF_FILE): string {
  return `echo "${proof} $((${a} * ${b})) $(cut -c1-8 /proc/sys/kernel/random/uuid)" | tee -a ${file}`;
}

/** What the proof line starts with when the command ran: the proof and the product, each followed by a space. */
export function expectedProof(proof: string, a: number, b: number): string {
  return `${proof} ${a * b} `;
}

/** Where VM1's disk is in the emulator's data dir, and the secrets a scan of it looks for. */
export interface Vm1OnDisk {
  name: string;
  /** VM1's own filesystem (its writable layer, as a checkpoint copies it): what its next checkpoint would hold. */
  sandboxDirs: string[];
  /**
   * Each checkpoint of VM1 still on disk: the layer it froze when VM1 slept (layered snapshots: what changed since
   * the checkpoint before). A deleted checkpoint's layer is kept, and scanned, while a later one stands on it.
   */
  checkpointDirs: string[];
  /** Every secret value in play, by a name that says what it is (values only in memory). */
  secrets: Record<string, string>;
}

/**
 * The emulator's layout (lifecycle.ts, sandboxes.ts, isolation.ts): a sandbox's files are under
 * `sandboxes/<encoded name>~<incarnation>/fs` (its own writable layer), a snapshot's frozen layer under
 * `snapshots/<id>/fs`; `checkpointIds` may name deleted checkpoints, whose directories are kept only while used.
 */
export async function vm1OnDisk(
  dataDir: string,
  name: string,
  checkpointIds: string[],
  secrets: Record<string, string>,
): Promise<Vm1OnDisk> {
  const encoded = encodeURIComponent(name);
  const incarnations = (await readdir(path.join(dataDir, "sandboxes"))).filter(
    (entry) => entry === encoded || entry.startsWith(`${encoded}~`),
  );
  return {
    name,
    sandboxDirs: incarnations.map((entry) => path.join(dataDir, "sandboxes", entry, "fs")),
    checkpointDirs: checkpointIds.map((id) => path.join(dataDir, "snapshots", id)).filter((dir) => existsSync(dir)),
    secrets,
  };
}

/** The proof file's lines on a box ("" when it has none). */
export async function proofsOn(box: Sandbox): Promise<string> {
  const done = await box.runCommand("sh", ["-c", `cat ${PROOF_FILE} 2>/dev/null || true`]);
  return (await done.stdout()).trim();
}

export async function gatewayInstance(publicOrigin: string, token: string): Promise<string> {
  return (await new GatewayClient({ baseUrl: publicOrigin, token, timeoutMs: 15_000 }).status()).instanceId;
}

/** The plugin's step lines for its leases (`vercel-sandbox vsb_…: <step>`), from VM1's gateway log. */
export async function workerSteps(vm1: Sandbox): Promise<string[]> {
  const out = await sh(
    vm1,
    "read the gateway log",
    `grep -oE 'vercel-sandbox vsb_[0-9a-f]+: .*' ${GATEWAY_LOG} || true`,
  );
  return out
    .split("\n")
    .filter(Boolean)
    .map((line) => line.replace(/^vercel-sandbox (vsb_[0-9a-f]{6})[0-9a-f]*/, "$1…").slice(0, 120));
}

/**
 * The runtime archives core built on VM1 for node bootstrap (one per gateway process, lazily at its first dispatch:
 * `$TMPDIR/openclaw-node-runtime-*`): when each began (its directory's birth) and was done (the archive's mtime),
 * epoch ms, oldest first. Empty when the box keeps no birth times.
 */
export async function runtimeArchives(vm1: Sandbox): Promise<Array<{ startedMs: number; doneMs: number }>> {
  const out = await sh(
    vm1,
    "list core's runtime archives",
    `for d in ${ROOT}/tmp/openclaw-node-runtime-*; do [ -f "$d/node-runtime.tgz" ] && stat -c '%W' "$d" && stat -c '%Y' "$d/node-runtime.tgz"; done; true`,
  );
  const numbers = out.split("\n").filter(Boolean).map(Number);
  const found: Array<{ startedMs: number; doneMs: number }> = [];
  for (let i = 0; i + 1 < numbers.length; i += 2) {
    const [born, done] = [numbers[i]!, numbers[i + 1]!];
    if (born > 0 && done >= born) found.push({ startedMs: born * 1000, doneMs: done * 1000 });
  }
  return found.sort((a, b) => a.startedMs - b.startedMs);
}

/** What the scan of VM1's gateway tree leaves out, and why. */
const GATEWAY_TREE_SKIP = [
  { name: "node_modules", why: "packages npm installed from the registry before the gateway held any secret" },
];

/**
 * Files under VM1's gateway tree (`root`) that hold any of `secrets` (every one given: the gateway's, Vercel's and
 * the notify tokens and the model key), by the one secret scan (infra) run as root on VM1: the secrets in its
 * environment only, a canary it must find, and any file it cannot read an error.
 */
export async function secretsOnDisk(
  vm1: Pick<Sandbox, "runCommand">,
  secrets: string[],
  root: string = ROOT,
): Promise<string[]> {
  const needles = Object.fromEntries(secrets.map((s, i) => [`secret #${i + 1}`, s]));
  const { args, env } = secretScanCommand({ roots: [root], needles, skip: GATEWAY_TREE_SKIP });
  const done = await vm1.runCommand({ cmd: "node", args, env, sudo: true });
  let report: SecretScanReport;
  try {
    report = secretScanReport(done.exitCode, await done.stdout(), await done.stderr());
  } catch (error) {
    throw new DiskScanError(`the secret scan failed on VM1: ${(error as Error).message}`);
  }
  return [...new Set(Object.values(report.hits).flat())].sort();
}

export class DiskScanError extends Error {
  override readonly name = "DiskScanError";
}

/**
 * The files under `dirs` (on this machine: VM1's layer and checkpoints, vm1OnDisk) that hold `secret`, by the one
 * secret scan (infra), its canary planted in each dir for the scan and removed after. An unreadable file fails it.
 */
export async function filesHolding(dirs: string[], secret: string): Promise<string[]> {
  if (dirs.length === 0) throw new DiskScanError("no directory to scan");
  try {
    return (await scanHere({ roots: dirs, needles: { secret } })).hits.secret ?? [];
  } catch (error) {
    throw new DiskScanError(`the scan of VM1's disk failed: ${(error as Error).message}`);
  }
}
