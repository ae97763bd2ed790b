// The current provision phase of message 1, live (issue 21): the plugin on VM1 logs `phase … started` and
// `phase … done in N ms` for each phase of a provision (allocate, create or adopt, preparation, enrollment,
// worker start); while the first message waits for its worker, the job reads those lines from VM1's gateway log
// and shows where it is instead of a silent minute. On a terminal one status line is rewritten in place; otherwise
// (CI, a log file, a spec) each change is a plain line. `phaseLines` and `statusOf` are pure; the watcher is I/O.
import type { Sandbox } from "@vercel/sandbox";
import { GATEWAY_LOG, sh } from "./vm1.js";

const PHASE =
  /vercel-sandbox (vsb_[0-9a-f]+): phase ([a-z][a-z ]*?) (started|done in [0-9]+ ms|failed after [0-9]+ ms)$/;

export interface PhaseLine {
  leaseId: string;
  phase: string;
  /** "started", "done in N ms" or "failed after N ms". */
  state: string;
}

/** The provider's phase lines among a log's lines, in order. */
export function phaseLines(text: string): PhaseLine[] {
  const found: PhaseLine[] = [];
  for (const line of text.split("\n")) {
    const match = PHASE.exec(line.trim());
    if (match) found.push({ leaseId: match[1]!, phase: match[2]!, state: match[3]! });
  }
  return found;
}

/** What the status line says for the latest phase line (the lease shortened as the job's notes shorten it). */
export function statusOf(line: PhaseLine, elapsedMs?: number): string {
  const since = line.state === "started" && elapsedMs !== undefined ? ` (${Math.round(elapsedMs / 1000)} s)` : "";
  return `VM2 ${line.leaseId.slice(0, 10)}…: phase ${line.phase} ${line.state}${since}`;
}

/** Where the status goes: one line rewritten in place, or a plain line per change. */
export interface LiveLine {
  update(status: string, changed: boolean): void;
  /** Clears the line (before the next regular line is printed). */
  end(): void;
}

/** A plain line per new phase line (elapsed-time updates are not printed). */
export function plainLines(log: (line: string) => void): LiveLine {
  return {
    update: (status, changed) => {
      if (changed) log(`    ⋯ ${status}`);
    },
    end: () => undefined,
  };
}

/** One status line on a terminal, rewritten in place. */
export function terminalLine(stream: { write(text: string): unknown }): LiveLine {
  let shown = false;
  return {
    update: (status) => {
      stream.write(`\r\x1b[2K    ⋯ ${status}`);
      shown = true;
    },
    end: () => {
      if (shown) stream.write("\r\x1b[2K");
      shown = false;
    },
  };
}

export interface WatchOptions {
  intervalMs?: number;
  /** Phase lines already shown (an earlier message's): the log is VM1's for its whole life, checkpoints included. */
  skip?: number;
}

/**
 * Reads VM1's gateway log every `intervalMs` and shows each new phase line until `stop` (which waits for the read
 * under way and resolves with the count of phase lines seen, for the next watcher's `skip`). A VM1 that is not
 * running is left alone: a command would resume it (the SDK resumes a stopped sandbox for any command), in place
 * of the host's wake that starts its gateway.
 */
export function watchPhases(vm1: () => Promise<Sandbox>, live: LiveLine, options: WatchOptions = {}) {
  const intervalMs = options.intervalMs ?? 2_000;
  let stopped = false;
  let cutWait: () => void = () => undefined;
  let seen = options.skip ?? 0;
  let latest: { line: PhaseLine; sinceMs: number } | undefined;
  const loop = (async () => {
    while (!stopped) {
      const text = await vm1()
        .then((box) =>
          box.status === "running"
            ? sh(box, "read the gateway log", `grep -E 'vercel-sandbox vsb_[0-9a-f]+: phase ' ${GATEWAY_LOG} || true`)
            : undefined,
        )
        .catch(() => undefined);
      if (stopped) break;
      // Unread (VM1 asleep or a failed read) is not an empty log: nothing changes.
      const lines = text === undefined ? [] : phaseLines(text);
      if (lines.length > seen) {
        // Every new line in order (a plain log shows them all); the last one stays on the status line.
        for (const line of lines.slice(seen)) live.update(statusOf(line), true);
        latest = { line: lines[lines.length - 1]!, sinceMs: performance.now() };
        seen = lines.length;
      } else if (latest && text !== undefined) {
        live.update(statusOf(latest.line, performance.now() - latest.sinceMs), false);
      }
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, intervalMs);
        cutWait = () => {
          clearTimeout(timer);
          resolve();
        };
      });
    }
  })();
  return {
    async stop(): Promise<number> {
      stopped = true;
      cutWait();
      await loop;
      live.end();
      return seen;
    },
  };
}
