// What ends a test's child processes when the test process itself dies instead of disposing of them: an exit
// hook and signal hooks (SIGKILL to every live tree), and, for deaths no hook sees (the worker SIGKILLed or
// crashing natively), a watchdog holding a pipe from this process: when the pipe closes, it kills every
// process carrying this process's owner tag. All three exist only while a tree is live, so a test that ended
// its children leaves nothing behind, the watchdog included.

import { type ChildProcess, spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import type { ProcessTree } from "./process-trees.js";

/** Environment variable tagging every child of this process (and, by inheritance, their descendants). */
export const OWNER_TAG_VARIABLE = "OPENCLAW_TEST_OWNER";
/** This generation's owner tag: a new one per watchdog, so a retiring watchdog never reaps a newer child. */
let ownerValue = "";

const live = new Set<ProcessTree>();
const SIGNALS: NodeJS.Signals[] = ["SIGTERM", "SIGINT", "SIGHUP"];
let watchdog: ChildProcess | undefined;

// Plain CommonJS for `node -e`: on stdin's end (the owner is gone, however it died), SIGKILL every process whose
// environment carries the owner tag, and its process group.
const WATCHDOG = `
const fs = require("node:fs");
const tag = process.argv[1];
const reap = () => {
  for (const name of fs.readdirSync("/proc")) {
    if (!/^\\d+$/.test(name) || Number(name) === process.pid) continue;
    try {
      if (!fs.readFileSync("/proc/" + name + "/environ", "latin1").split("\\0").includes(tag)) continue;
      const stat = fs.readFileSync("/proc/" + name + "/stat", "utf8");
      const pgid = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[2]);
      if (pgid > 1 && pgid !== process.pid) try { process.kill(-pgid, "SIGKILL"); } catch {}
      try { process.kill(Number(name), "SIGKILL"); } catch {}
    } catch {}
  }
  process.exit(0);
};
process.stdin.on("end", reap).on("error", reap).resume();
`;

/**
 * Keeps `tree` ended if this process dies before release(tree). Call it before spawning the tree's child, and
 * give the child the environment entry it returns: that is how the watchdog finds it once this process is gone.
 */
export function guard(tree: ProcessTree): Record<string, string> {
  live.add(tree);
  if (live.size === 1) install();
  return { [OWNER_TAG_VARIABLE]: ownerValue };
}

/** `tree` has ended (or its owner ends it): the hooks stop watching it, and go once nothing is live. */
export function release(tree: ProcessTree): void {
  if (!live.delete(tree) || live.size > 0) return;
  process.removeListener("exit", endAllNow);
  for (const signal of SIGNALS) process.removeListener(signal, onSignal);
  // Closing its stdin makes the watchdog reap (nothing is left) and exit.
  watchdog?.stdin?.end();
  watchdog = undefined;
}

function install(): void {
  ownerValue = `${process.pid}-${randomBytes(8).toString("hex")}`;
  process.on("exit", endAllNow);
  for (const signal of SIGNALS) process.on(signal, onSignal);
  const child = spawn(process.execPath, ["-e", WATCHDOG, `${OWNER_TAG_VARIABLE}=${ownerValue}`], {
    detached: true,
    stdio: ["pipe", "ignore", "ignore"],
    env: { PATH: process.env.PATH ?? "" },
  });
  // The hooks above still hold if the watchdog cannot start or its pipe breaks; nothing else to do.
  child.on("error", () => undefined);
  child.stdin?.on("error", () => undefined);
  child.unref();
  (child.stdin as unknown as { unref?: () => void } | null)?.unref?.();
  watchdog = child;
}

function endAllNow(): void {
  for (const tree of live) {
    try {
      tree.endNow();
    } catch {
      // Exiting: the watchdog still reaps whatever this missed.
    }
  }
}

function onSignal(signal: NodeJS.Signals): void {
  endAllNow();
  process.removeListener(signal, onSignal);
  // Keep the signal's default (termination) unless someone else handles it.
  if (process.listenerCount(signal) === 0) process.kill(process.pid, signal);
}
