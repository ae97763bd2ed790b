// Vitest global setup: a run leaves the temp dir as it found it. Each run gets its own TMPDIR
// (`<tmp>/vsb-vitest-<pid>-XXXXXX`, on a memory-backed file system when there is one: runTmpParent), inherited by
// every worker and every process they start that keeps the environment, so what it leaves is its own even while
// other runs share the machine. At teardown the run FAILS, naming them, when that dir holds an entry of ours
// (temp-dirs.ts) or when the system temp dir gained one (a process that ignored TMPDIR); then the run dir is
// removed, so even a failing run leaves nothing.
// Processes given a TMPDIR of their own (the gateway harness's run dir, a sandbox's /tmp inside the emulator's
// data dir) are covered through the dir that holds it.
import { constants } from "node:fs";
import { access, chmod, readdir, statfs } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { createOwnedTempDir } from "../../src/infra/owned-temp-dir.js";
import { isOurs, newEntriesOfOurs } from "./temp-dirs.js";

const RUN_PREFIX = "vsb-vitest-";
/** The gateway harness's run dirs (test/gateway/isolation.ts). */
const KEPT_PREFIX = "ocgw-test-";

export class TempLeftoversError extends Error {
  constructor(readonly entries: string[]) {
    super(
      `the test run left ${entries.length} temp entr${entries.length === 1 ? "y" : "ies"} behind (those in the run's ` +
        `own TMPDIR are now removed): ${entries.join(", ")}. Remove each where it is created (afterAll/afterEach, ` +
        "onTestFinished, or the owner's close).",
    );
    this.name = "TempLeftoversError";
  }
}

/** Linux's statfs type of a tmpfs (TMPFS_MAGIC). */
const TMPFS = 0x01021994;
/** What the run's dir must leave free on a memory-backed file system to be put there. */
const MIN_FREE_BYTES = 8 * 1024 ** 3;

/**
 * Where the run's TMPDIR goes: `VSB_TEST_TMP` when set; else /dev/shm when it is a tmpfs with room to spare (the
 * emulators' sandboxes and snapshots live under TMPDIR, and writing a sandbox's files costs far less system time
 * there: a runtime's npm install on VM2 took 25 CPU-s instead of 44 on this machine's disk); else the system's.
 */
export async function runTmpParent(systemTmp: string): Promise<string> {
  const configured = process.env.VSB_TEST_TMP;
  if (configured) return configured;
  try {
    const shm = await statfs("/dev/shm");
    if (shm.type === TMPFS && shm.bavail * shm.bsize >= MIN_FREE_BYTES) {
      await access("/dev/shm", constants.W_OK);
      return "/dev/shm";
    }
  } catch {
    // No /dev/shm, or not one we may write: the system's temp dir.
  }
  return systemTmp;
}

export default async function setup(): Promise<() => Promise<void>> {
  const systemTmp = tmpdir();
  // createOwnedTempDir first removes the run dirs of runs that were SIGKILLed.
  const run = await createOwnedTempDir(RUN_PREFIX, await runTmpParent(systemTmp));
  // It stands in for /tmp, so it has /tmp's mode: a program a spec runs as another user may make its own
  // files in it, as it could in /tmp.
  await chmod(run.path, 0o1777);
  const before = await readdir(systemTmp);
  const previous = process.env.TMPDIR;
  process.env.TMPDIR = run.path;
  return async () => {
    if (previous === undefined) delete process.env.TMPDIR;
    else process.env.TMPDIR = previous;
    // OPENCLAW_GATEWAY_TEST_KEEP=1 keeps the gateway harness's run dirs for a post-mortem: they, and this dir, stay.
    const keep = process.env.OPENCLAW_GATEWAY_TEST_KEEP === "1";
    const inRun = (await readdir(run.path)).filter((name) => !(keep && name.startsWith(KEPT_PREFIX)));
    // Other runs' own dirs come and go while this one runs: each checks its own.
    const inSystem = newEntriesOfOurs(before, await readdir(systemTmp)).filter((name) => !name.startsWith(RUN_PREFIX));
    if (keep) {
      run.keep();
      process.stderr.write(`[temp check] kept ${run.path} until the next run (OPENCLAW_GATEWAY_TEST_KEEP=1)\n`);
    } else {
      await run.remove();
    }
    const others = inRun.filter((name) => !isOurs(name));
    if (others.length > 0) {
      process.stderr.write(`[temp check] removed third-party temp entries of this run: ${others.join(", ")}\n`);
    }
    const left = [
      ...inRun.filter(isOurs).map((name) => path.join(run.path, name)),
      ...inSystem.map((name) => path.join(systemTmp, name)),
    ];
    if (left.length > 0) throw new TempLeftoversError(left);
  };
}
