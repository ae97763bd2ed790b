// What the Codex remote-exec spec reads on VM2 with separate emulator commands (never through the gateway):
// processes a command Codex started (from the pid file it wrote), the node's processes, the secrets the
// enrollment program was handed (from its environment while it runs), and a whole-disk scan.
import type { Sandbox } from "@vercel/sandbox";
import { scanBox, WHOLE_DISK } from "../../support/secret-scan.js";
import { sleep, waitFor } from "../wait.js";

/** The environment variables our enrollment program gets its one-time secrets in (src/provider/enrollment). */
const ENROLLMENT_SECRETS = ["OPENCLAW_VSB_SETUP_CODE", "OPENCLAW_VSB_BOOTSTRAP_TOKEN"] as const;
type EnrollmentSecret = (typeof ENROLLMENT_SECRETS)[number];

/** Runs `script` under `sh -c` on the box as root, `args` as "$@"; returns its stdout (exit code ignored). */
export async function sh(box: Sandbox, script: string, args: string[] = []): Promise<string> {
  const done = await box.runCommand({ cmd: "sh", args: ["-c", script, "sh", ...args], sudo: true });
  return done.stdout();
}

/** The pids a Codex command wrote to `/tmp/<tag>.pids` (its shell, its background child), once both are there. */
export function pidsOf(vm2: () => Promise<Sandbox>, tag: string): Promise<string[]> {
  return waitFor(
    `the command's pid file /tmp/${tag}.pids on VM2`,
    async () => {
      const pids = (await sh(await vm2(), 'cat "/tmp/$1.pids" 2>/dev/null', [tag])).split("\n").filter(Boolean);
      return pids.length === 2 && pids.every((p) => /^\d{1,9}$/.test(p)) ? pids : undefined;
    },
    { timeoutMs: 300_000, intervalMs: 500 },
  );
}

/**
 * Which of `pids` still name a live (not zombie) process on the box. Each pid is answered "alive" or "dead" by
 * reading its /proc entry as root; a probe that fails, or leaves any pid unanswered, could not tell, and throws:
 * an error is never evidence that a process ended.
 */
export async function alive(box: Sandbox, pids: string[]): Promise<string[]> {
  if (pids.some((p) => !/^\d{1,9}$/.test(p))) throw new Error(`not pids: ${JSON.stringify(pids)}`);
  // A pid without /proc/<pid> is dead; one whose stat says Z is a zombie (dead too); any other stat is alive. A
  // stat that exists but cannot be read leaves the loop with an error (set -e), not a verdict.
  const script = [
    "set -eu",
    'for p in "$@"; do',
    '  if [ ! -e "/proc/$p" ]; then echo "$p dead"; continue; fi',
    '  stat=$(cat "/proc/$p/stat" 2>/dev/null) || { [ ! -e "/proc/$p" ] && echo "$p dead" && continue; exit 3; }',
    '  case "$stat" in *") Z "*) echo "$p dead" ;; *) echo "$p alive" ;; esac',
    "done",
  ].join("\n");
  const done = await box.runCommand({ cmd: "sh", args: ["-c", script, "sh", ...pids], sudo: true });
  const [out, err] = [await done.stdout(), await done.stderr()];
  const verdicts = new Map(
    out
      .split("\n")
      .filter(Boolean)
      .map((line) => line.split(" ") as [string, string]),
  );
  const untold = pids.filter((p) => !["alive", "dead"].includes(verdicts.get(p) ?? ""));
  if (done.exitCode !== 0 || untold.length > 0) {
    throw new Error(
      `could not tell whether ${untold.join(", ") || pids.join(", ")} live (exit ${done.exitCode}): ${err.slice(-300)}`,
    );
  }
  return pids.filter((p) => verdicts.get(p) === "alive");
}

/**
 * Waits until none of `pids` is alive on VM2; returns how long that took (ms). A round that could not tell counts
 * as not yet gone: only an answer "dead" for every pid ends the wait (else it times out, naming the last error).
 */
export async function gone(vm2: () => Promise<Sandbox>, pids: string[], what: string): Promise<number> {
  const started = performance.now();
  await waitFor(what, async () => ((await alive(await vm2(), pids)).length === 0 ? true : undefined), {
    timeoutMs: 120_000,
    intervalMs: 1_000,
  });
  return Math.round(performance.now() - started);
}

/** The pids of the OpenClaw node processes (`openclaw-node` / `openclaw-connect`) run by the box's account. */
export async function nodePids(box: Sandbox): Promise<string[]> {
  const out = await sh(
    box,
    "ps -eo pid=,user:20=,args= | awk '$2 == \"vercel-sandbox\" && $3 ~ /^openclaw-(node|connect)/ { print $1 }'",
  );
  return out.split("\n").filter((p) => /^\d{1,9}$/.test(p));
}

/**
 * Reads the enrollment program's one-time secrets from its environment on VM2 while `until` is pending (every
 * second, as root; VM2 does not exist at first). The values stay in this process: callers scan for them and
 * never print them.
 */
export async function enrollmentSecretsDuring<T>(
  vm2: () => Promise<Sandbox>,
  until: Promise<T>,
): Promise<{ result: T; secrets: Partial<Record<EnrollmentSecret, string>> }> {
  const secrets: Partial<Record<EnrollmentSecret, string>> = {};
  let pending = true;
  const watching = (async () => {
    while (pending) {
      try {
        const out = await sh(
          await vm2(),
          `for e in /proc/[0-9]*/environ; do tr '\\0' '\\n' < "$e" 2>/dev/null; done | grep -E '^(${ENROLLMENT_SECRETS.join("|")})=.' | sort -u`,
        );
        for (const line of out.split("\n")) {
          const at = line.indexOf("=");
          const name = line.slice(0, at) as EnrollmentSecret;
          if (at > 0 && ENROLLMENT_SECRETS.includes(name)) secrets[name] = line.slice(at + 1);
        }
      } catch {
        // No VM2 yet, or the command raced its end: the next round reads again.
      }
      await sleep(1_000);
    }
  })();
  try {
    return { result: await until, secrets };
  } finally {
    pending = false;
    await watching;
  }
}

/**
 * The files on the box's whole disk (WHOLE_DISK: the one secret scan, as root, its canary planted and found, any
 * file it cannot read an error) holding each needle; per needle, in order. A `control` needle known to be on disk
 * shows the scan finds what the test put there, beside the canary it checks itself.
 */
export async function scanDisk(box: Sandbox, needles: string[]): Promise<string[][]> {
  const named = Object.fromEntries(needles.map((n, i) => [`needle #${i}`, n]));
  const report = await scanBox(box, { ...WHOLE_DISK, needles: named });
  return needles.map((_, i) => report.hits[`needle #${i}`] ?? []);
}
