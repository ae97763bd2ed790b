// The bootstrap program's output, read on the provider side: one JSON object per line (`{"vsb":true,…}`), so
// a stray line from anything else on the box is ignored instead of misread. Pure: text in, events out.
export type BootstrapPhase = "preparation" | "reuse" | "download" | "verify" | "install" | "activate" | "launch";

export interface PhaseEvent {
  event: "phase";
  phase: BootstrapPhase;
  ms: number;
  detail: Record<string, unknown> | null;
}
export interface DoneEvent {
  event: "done";
  adopted: boolean;
  pid: number;
  runtime: "installed" | "reused" | "running";
}
export interface FailedEvent {
  event: "failed";
  phase: string;
  code: string;
  message: string;
}
export interface EvidenceEvent {
  event: "evidence";
  runtime: string;
  node: "alive" | "foreign" | "dead-or-absent";
  logTail: string;
}
export type BootstrapEvent = PhaseEvent | DoneEvent | FailedEvent | EvidenceEvent;

export function parseEvents(stdout: string): BootstrapEvent[] {
  const events: BootstrapEvent[] = [];
  for (const line of stdout.split("\n")) {
    if (!line.startsWith('{"vsb":true')) continue;
    try {
      const parsed = JSON.parse(line) as { vsb?: unknown; event?: unknown };
      if (parsed.vsb === true && typeof parsed.event === "string") events.push(parsed as BootstrapEvent);
    } catch {
      // A line cut short (the command was killed mid-write) says nothing reliable.
    }
  }
  return events;
}

/** The run's outcome: its `done` or `failed` line; undefined when it ended without one (killed, crashed). */
export function outcomeOf(events: readonly BootstrapEvent[]): DoneEvent | FailedEvent | undefined {
  return events.find((e): e is DoneEvent | FailedEvent => e.event === "done" || e.event === "failed");
}

export function phasesOf(events: readonly BootstrapEvent[]): PhaseEvent[] {
  return events.filter((e): e is PhaseEvent => e.event === "phase");
}

const EVIDENCE_CAP = 2048;

/** Evidence as one bounded line; the caller redacts it (it contains the node's log). */
export function evidenceText(event: EvidenceEvent | undefined, unavailable?: string): string {
  if (!event) return `box evidence unavailable: ${unavailable ?? "the evidence run printed nothing"}`;
  const text = `node-runtime=${event.runtime} node=${event.node} node.log: ${event.logTail || "(empty)"}`
    .replace(/\s+/g, " ")
    .trim();
  return `box evidence: ${text.length > EVIDENCE_CAP ? `…${text.slice(-EVIDENCE_CAP)}` : text}`;
}
