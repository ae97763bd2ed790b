// The specs' one secret scan, over the core in src/infra/secret-scan.ts (which the main job runs too): a tree on
// this machine (`scanTree`), a box's disk and processes (`scanBox`), and the single-needle form the gateway specs
// use (`scanForSecret`). Every call plants and must find its own canary in each root, and fails on anything it
// cannot read unless told, by exact path, name or error code, why to skip it.
import path from "node:path";
import type { Sandbox } from "@vercel/sandbox";
import {
  type SecretScanReport,
  type SecretScanRequest,
  type SecretScanSkip,
  scanHere,
  secretScanCommand,
  secretScanReport,
  // The module, not infra's door: the bench loads the gateway harness, and with it this file, by Node's type
  // stripping, which cannot load the door's other modules (durable-file.ts has parameter properties).
} from "../../src/infra/secret-scan.js";

export type { SecretScanReport, SecretScanRequest };

/** What a whole-disk scan of a box leaves out: the kernel's views, not files (processes are read as such). */
export const KERNEL_VIEWS: SecretScanSkip[] = [
  { path: "/proc", why: "the kernel's view of processes: read as processes (environ, cmdline) when asked" },
  { path: "/sys", why: "the kernel's view of devices and settings, no file of anyone's" },
  { path: "/dev", why: "device nodes and the kernel's pseudo-terminals, no file of anyone's" },
];

/** The uid the kernel shows for ids a user namespace does not map (overflowuid). */
const UNMAPPED = 65_534;

/**
 * A box's whole disk: `/` but the kernel's views and the read-only /usr; on the emulator, the host's files in its
 * read-only bind mounts that the sandbox's root may not read are owned by unmapped ids (shown as 65534) and
 * skipped as such, by that reason.
 */
export const WHOLE_DISK = {
  roots: ["/"],
  skip: [
    ...KERNEL_VIEWS,
    // holder-script.ts mounts it as an overlay of lower layers only: nothing in a box can write to it.
    { path: "/usr", why: "read-only in the emulator's boxes (the image's /usr over the host's, no upper layer)" },
  ],
  unreadableOwner: {
    uid: UNMAPPED,
    why: "the host's own file in a read-only mount of the emulator's (an unmapped owner): no program in the box wrote it",
  },
} satisfies Partial<SecretScanRequest>;

/** Scans directories on this machine. */
export function scanTree(request: SecretScanRequest): Promise<SecretScanReport> {
  return scanHere(request);
}

/** Scans on a box with its `node` (as root unless told), the needles in the command's environment only. */
export async function scanBox(box: Sandbox, request: SecretScanRequest, sudo = true): Promise<SecretScanReport> {
  const { args, env } = secretScanCommand(request);
  const done = await box.runCommand({ cmd: "node", args, env, sudo });
  return secretScanReport(done.exitCode, await done.stdout(), await done.stderr());
}

export interface SecretScan {
  /** Files (relative to the root) whose bytes contain the needle. */
  matches: string[];
  /** Regular files read to the end. */
  filesRead: number;
  /** Entries that are not regular files (sockets, FIFOs, devices, symlinks): they hold no bytes of their own. */
  notFiles: number;
}

export interface ScanOptions {
  skip?: SecretScanSkip[];
  tolerate?: Record<string, string>;
}

/** One needle under one root on this machine, matches relative to the root. */
export async function scanForSecret(root: string, needle: string, options: ScanOptions = {}): Promise<SecretScan> {
  const report = await scanTree({ roots: [root], needles: { needle }, ...options });
  return {
    matches: (report.hits.needle ?? []).map((file) => path.relative(root, file)),
    filesRead: report.filesRead,
    notFiles: report.notFiles,
  };
}
