// The kernel's process table as the harness reads it (Linux /proc): which processes exist, their parent,
// process group and start time, and whether one carries a given environment tag. Synchronous on purpose: the
// exit hook that ends a dying worker's children cannot await. Every reader throws when /proc cannot be read,
// so a check built on it fails instead of finding "no processes".

import { readdirSync, readFileSync } from "node:fs";

export interface ProcessEntry {
  pid: number;
  ppid: number;
  pgid: number;
  /** One-letter state from /proc/<pid>/stat; `Z` (zombie) and `X` (dead) mean it has ended. */
  state: string;
  /** Start time in clock ticks since boot: with the pid, identifies a process across PID reuse. */
  start: number;
}

const ENDED = new Set(["Z", "X", "x"]);

/** Parses /proc/<pid>/stat; the command name is parenthesised and may contain spaces and parentheses. */
export function parseStat(text: string): Omit<ProcessEntry, "pid"> {
  const fields = text.slice(text.lastIndexOf(")") + 2).split(" ");
  // Fields after the name, 0-based: state(0) ppid(1) pgrp(2) ... starttime(19).
  const [state = "?", ppid = "0", pgid = "0"] = fields;
  return { state, ppid: Number(ppid), pgid: Number(pgid), start: Number(fields[19] ?? 0) };
}

function isMissing(error: unknown): boolean {
  const code = (error as NodeJS.ErrnoException).code;
  return code === "ENOENT" || code === "ESRCH";
}

/** The process `pid`, or undefined when it does not exist or has ended (zombie). Throws on any other error. */
export function processEntry(pid: number, procRoot = "/proc"): ProcessEntry | undefined {
  let text: string;
  try {
    text = readFileSync(`${procRoot}/${pid}/stat`, "utf8");
  } catch (error) {
    if (isMissing(error)) {
      assertProcReadable(procRoot);
      return undefined;
    }
    throw error;
  }
  const entry = { pid, ...parseStat(text) };
  return ENDED.has(entry.state) ? undefined : entry;
}

/** Whether `pid` is a running (not ended) process. Throws when /proc cannot be read. */
export function isRunning(pid: number, procRoot = "/proc"): boolean {
  return processEntry(pid, procRoot) !== undefined;
}

/** Throws unless `procRoot` is a readable process table that lists this very process. */
export function assertProcReadable(procRoot = "/proc"): void {
  let names: string[];
  try {
    names = readdirSync(procRoot);
  } catch (error) {
    throw new Error(`cannot read the process table at ${procRoot}: ${(error as Error).message}`);
  }
  if (!names.includes(String(process.pid))) {
    throw new Error(`the process table at ${procRoot} does not list this process (${process.pid})`);
  }
}

/** Every running process (zombies excluded). Throws when /proc cannot be read. */
export function listProcesses(procRoot = "/proc"): ProcessEntry[] {
  assertProcReadable(procRoot);
  const entries: ProcessEntry[] = [];
  for (const name of readdirSync(procRoot)) {
    if (!/^\d+$/.test(name)) continue;
    let text: string;
    try {
      text = readFileSync(`${procRoot}/${name}/stat`, "utf8");
    } catch (error) {
      if (isMissing(error)) continue; // ended between readdir and read
      throw error;
    }
    const entry = { pid: Number(name), ...parseStat(text) };
    if (!ENDED.has(entry.state)) entries.push(entry);
  }
  return entries;
}

/** Whether `pid`'s environment holds exactly `NAME=value` (`tag`). False once it ended or for kernel threads. */
export function hasEnvironmentTag(pid: number, tag: string, procRoot = "/proc"): boolean {
  try {
    return readFileSync(`${procRoot}/${pid}/environ`, "latin1").split("\0").includes(tag);
  } catch (error) {
    // Ended meanwhile, or not ours to read (only root reads other users' environments; those are not ours).
    if (isMissing(error) || (error as NodeJS.ErrnoException).code === "EACCES") return false;
    throw error;
  }
}
