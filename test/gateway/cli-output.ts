// Reading what a CLI child printed: the JSON document of a `--json` command, and a failure description with
// the tail of its output. Pure text functions; the harness redacts what they return.

import type { RunResult } from "./processes.js";

export interface CallResult<T = unknown> extends RunResult {
  /** Parsed stdout JSON (success payload, or `{ok:false,error}` when the gateway returned an error). */
  json: T | undefined;
}

const JSON_START = /^[[{]/m;

/** Parses the JSON document a `--json` CLI command prints, tolerating banner/log lines around it. */
export function parseCliJson<T = unknown>(stdout: string): T | undefined {
  const text = stdout.trim();
  const attempts = [text];
  const start = text.search(JSON_START);
  if (start > 0) attempts.push(text.slice(start));
  if (start >= 0) {
    const end = text.lastIndexOf(text[start] === "{" ? "}" : "]");
    if (end > start) attempts.push(text.slice(start, end + 1));
  }
  for (const attempt of attempts) {
    try {
      return JSON.parse(attempt) as T;
    } catch {
      // try the next candidate
    }
  }
  return undefined;
}

/** "<what> exited <code>" (or "timed out") with the last 40 lines of stdout and stderr. Not redacted. */
export function describeFailure(what: string, result: RunResult): string {
  const tail = (text: string) => text.trim().split("\n").slice(-40).join("\n");
  return (
    `${what} ${result.timedOut ? `timed out after ${result.ms} ms` : `exited ${result.code ?? result.signal}`}\n` +
    `--- stdout ---\n${tail(result.stdout)}\n--- stderr ---\n${tail(result.stderr)}`
  );
}
