// The bootstrap program's output, read on the provider side: one JSON object per line (`{"vsb":true,…}`), so
// a stray line from anything else on the box is ignored instead of misread. The box is untrusted (its agent
// has sudo, the recipe ran there), so every line is checked against the schema of what the program emits:
// enums for what classifies a failure, integer ranges, bounded strings, and every string made one plain line
// before it reaches a log or an error. A line failing the schema is dropped and counted. Pure: text in, events out.
import { type Static, Type } from "@sinclair/typebox";
import { TypeCompiler } from "@sinclair/typebox/compiler";

const PHASES = ["preparation", "reuse", "download", "verify", "install", "activate", "launch", "publish"] as const;
export type BootstrapPhase = (typeof PHASES)[number];

/** The failure codes the program emits (program/*.ts `fail(…)`), besides `http-NNN` and Node's own error codes. */
export const FAILURE_CODES = [
  "node-version",
  "runtime-missing",
  "enrollment-needed",
  "connection",
  "egress-refused",
  "tls-pin-mismatch",
  "tls",
  "size-mismatch",
  "truncated",
  "sha256-mismatch",
  "npm-unavailable",
  "npm-failed",
  "runtime-mismatch",
  "plugin-enable",
  "foreign-process",
  "no-handoff",
  "node-exited",
  "archive-path",
  "setup-code",
  "content-length",
  "unexpected",
] as const;

/** The only phase each code that changes how a failure is handled may come from; elsewhere it is forged. */
const CODE_PHASE: Partial<Record<string, BootstrapPhase>> = {
  "node-version": "preparation",
  "runtime-missing": "reuse",
  "enrollment-needed": "reuse",
};

const TEXT_CHARS = 2000;
const DETAIL_CHARS = 1000;
/** Each field's text may carry escapes; the line as a whole is bounded before it is parsed. */
const LINE_CHARS = 16 * 1024;
const MAX_PID = 2 ** 22; // Linux's pid_max ceiling

const text = (maxLength: number) => Type.String({ maxLength });
const literals = <T extends readonly string[]>(values: T) => Type.Union(values.map((v) => Type.Literal(v)));
const common = { vsb: Type.Literal(true) };

const Phase = Type.Object(
  {
    ...common,
    event: Type.Literal("phase"),
    phase: literals(PHASES),
    ms: Type.Integer({ minimum: 0, maximum: 24 * 3600_000 }),
    // What a step returned; logged as JSON (which escapes control characters), so only its size is bounded.
    detail: Type.Union([
      Type.Null(),
      Type.Record(Type.String({ maxLength: 64 }), Type.Unknown(), { maxProperties: 16 }),
    ]),
  },
  { additionalProperties: false },
);
const Done = Type.Object(
  {
    ...common,
    event: Type.Literal("done"),
    adopted: Type.Boolean(),
    pid: Type.Integer({ minimum: 0, maximum: MAX_PID }),
    runtime: literals(["installed", "reused", "running"] as const),
  },
  { additionalProperties: false },
);
const Failed = Type.Object(
  {
    ...common,
    event: Type.Literal("failed"),
    phase: literals(PHASES),
    code: Type.Union([
      literals(FAILURE_CODES),
      Type.String({ pattern: "^http-[1-5][0-9][0-9]$" }),
      // Node's system and internal error codes (ENOENT, ERR_INVALID_ARG_TYPE) from an unexpected error.
      Type.String({ pattern: "^E[A-Z0-9_]{1,39}$" }),
    ]),
    message: Type.String({ maxLength: LINE_CHARS }),
  },
  { additionalProperties: false },
);
const Evidence = Type.Object(
  {
    ...common,
    event: Type.Literal("evidence"),
    runtime: text(200),
    node: literals(["alive", "foreign", "dead-or-absent"] as const),
    logTail: Type.String({ maxLength: LINE_CHARS }),
  },
  { additionalProperties: false },
);
const EventSchema = TypeCompiler.Compile(Type.Union([Phase, Done, Failed, Evidence]));

export type PhaseEvent = Omit<Static<typeof Phase>, "vsb">;
export type DoneEvent = Omit<Static<typeof Done>, "vsb">;
export type FailedEvent = Omit<Static<typeof Failed>, "vsb">;
export type EvidenceEvent = Omit<Static<typeof Evidence>, "vsb">;
export type BootstrapEvent = PhaseEvent | DoneEvent | FailedEvent | EvidenceEvent;

export interface ParsedOutput {
  events: BootstrapEvent[];
  /** Lines that claimed to be the program's (`{"vsb":true`) but failed its schema. */
  malformed: number;
}

/** One plain line of at most `max` characters: control characters (newlines, escapes, ANSI) become spaces. */
export function plainText(value: string, max = TEXT_CHARS): string {
  const plain = value
    .replace(/[\u0000-\u001f\u007f-\u009f\u2028\u2029]+/g, " ")
    .replace(/\s+/g, " ")
    .trim();
  return plain.length > max ? `${plain.slice(0, max - 1)}…` : plain;
}

export function parseOutput(stdout: string): ParsedOutput {
  const events: BootstrapEvent[] = [];
  let malformed = 0;
  for (const line of stdout.split("\n")) {
    if (!line.startsWith('{"vsb":true')) continue;
    const event = line.length <= LINE_CHARS ? checked(line) : undefined;
    if (event) events.push(event);
    else malformed += 1;
  }
  return { events, malformed };
}

export function parseEvents(stdout: string): BootstrapEvent[] {
  return parseOutput(stdout).events;
}

function checked(line: string): BootstrapEvent | undefined {
  let parsed: unknown;
  try {
    parsed = JSON.parse(line);
  } catch {
    // A line cut short (the command was killed mid-write) says nothing reliable.
    return undefined;
  }
  if (!EventSchema.Check(parsed)) return undefined;
  const { vsb: _, ...event } = parsed;
  switch (event.event) {
    case "phase":
      return { ...event, detail: event.detail && plainDetail(event.detail) };
    case "failed": {
      const from = CODE_PHASE[event.code];
      if (from !== undefined && from !== event.phase) return undefined;
      return { ...event, message: plainText(event.message) };
    }
    case "evidence":
      return { ...event, runtime: plainText(event.runtime, 200), logTail: plainText(event.logTail) };
    default:
      return event;
  }
}

function plainDetail(detail: Record<string, unknown>): Record<string, unknown> {
  return JSON.stringify(detail).length > DETAIL_CHARS ? { truncated: true } : detail;
}

/**
 * The run's outcome: its one `done` or `failed` line; undefined when it ended without one (killed, crashed) or
 * printed more than one (the program prints exactly one, so a second is forged and neither is believed).
 */
export function outcomeOf(events: readonly BootstrapEvent[]): DoneEvent | FailedEvent | undefined {
  const outcomes = events.filter((e): e is DoneEvent | FailedEvent => e.event === "done" || e.event === "failed");
  return outcomes.length === 1 ? outcomes[0] : undefined;
}

export function phasesOf(events: readonly BootstrapEvent[]): PhaseEvent[] {
  return events.filter((e): e is PhaseEvent => e.event === "phase");
}

const EVIDENCE_CAP = 2048;

/** Evidence as one bounded line; the caller redacts it (it contains the node's log). */
export function evidenceText(event: EvidenceEvent | undefined, unavailable?: string): string {
  if (!event) return `box evidence unavailable: ${plainText(unavailable ?? "the evidence run printed nothing", 500)}`;
  const text = plainText(
    `node-runtime=${event.runtime} node=${event.node} node.log: ${event.logTail || "(empty)"}`,
    Infinity,
  );
  return `box evidence: ${text.length > EVIDENCE_CAP ? `…${text.slice(-EVIDENCE_CAP)}` : text}`;
}
