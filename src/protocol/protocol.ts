// The wire protocol between the resident (this plugin, inside the gateway on VM1) and a host, written once as
// TypeBox schemas: the three authenticated routes' bodies and results, and the signed notification. The host
// library validates against these, and docs/protocol.md describes them for hosts in other languages.

import { type Static, Type } from "@sinclair/typebox";
import { WakeSnapshotSchema } from "./wake.js";

export const ROUTE_PREFIX = "/vercel-sandbox/v1";
export const ROUTES = {
  status: `${ROUTE_PREFIX}/status`,
  suspend: `${ROUTE_PREFIX}/suspend`,
  resume: `${ROUTE_PREFIX}/resume`,
} as const;

/** Upper bound on a route's request body; bigger bodies are answered 413. */
export const MAX_BODY_BYTES = 4_096;

const Id = Type.String({ minLength: 1, maxLength: 128, pattern: "\\S" });

export const NotifyReasonSchema = Type.Union([Type.Literal("idle"), Type.Literal("deadline"), Type.Literal("fenced")]);

export const NotificationSchema = Type.Object({
  version: Type.Literal(1),
  reason: NotifyReasonSchema,
  /** Random per gateway process: a wake starts a new one. */
  instanceId: Type.String(),
  sentAtMs: Type.Integer(),
  lastActivityMs: Type.Integer(),
  deadlineAtMs: Type.Optional(Type.Integer()),
});
export type Notification = Static<typeof NotificationSchema>;

export const SuspendRequestSchema = Type.Object({ requestId: Id }, { additionalProperties: false });
export type SuspendRequest = Static<typeof SuspendRequestSchema>;

export const ResumeRequestSchema = Type.Object({ suspensionId: Id }, { additionalProperties: false });
export type ResumeRequest = Static<typeof ResumeRequestSchema>;

export const SuspendReadySchema = Type.Object({
  status: Type.Literal("ready"),
  suspensionId: Type.String(),
  expiresAtMs: Type.Integer(),
});
export const SuspendDrainingSchema = Type.Object({
  status: Type.Literal("draining"),
  suspensionId: Type.String(),
  expiresAtMs: Type.Integer(),
  retryAfterMs: Type.Integer({ minimum: 0 }),
  /** The gateway's count of tracked work still running, and what it is (its blockers' messages). */
  activeCount: Type.Optional(Type.Integer({ minimum: 0 })),
  blockers: Type.Optional(Type.Array(Type.String())),
});
export const SuspendBusySchema = Type.Object({
  status: Type.Literal("busy"),
  /** `activity`: our clock says not yet; `gateway`: the gateway refused (work, another lease, a restart); `reclaim`: a worker is not released yet. */
  reason: Type.Union([Type.Literal("activity"), Type.Literal("gateway"), Type.Literal("reclaim")]),
  retryAfterMs: Type.Integer({ minimum: 0 }),
  activeCount: Type.Optional(Type.Integer({ minimum: 0 })),
  blockers: Type.Optional(Type.Array(Type.String())),
});
export const SuspendResultSchema = Type.Union([SuspendReadySchema, SuspendDrainingSchema, SuspendBusySchema]);
export type SuspendResult = Static<typeof SuspendResultSchema>;

export const ResumeResultSchema = Type.Object({ status: Type.Literal("running"), resumed: Type.Boolean() });
export type ResumeResult = Static<typeof ResumeResultSchema>;

export const WorkerSchema = Type.Object({
  environmentId: Type.String(),
  state: Type.String(),
  sessions: Type.Array(Type.String()),
});
export type Worker = Static<typeof WorkerSchema>;

export const SuspensionPhaseSchema = Type.Union([
  Type.Object({ phase: Type.Literal("running") }),
  Type.Object({
    phase: Type.Union([Type.Literal("draining"), Type.Literal("ready")]),
    requestId: Type.String(),
    suspensionId: Type.String(),
    expiresAtMs: Type.Integer(),
  }),
]);

export const StatusResultSchema = Type.Object({
  instanceId: Type.String(),
  nowMs: Type.Integer(),
  startedAtMs: Type.Integer(),
  lastActivityMs: Type.Integer(),
  idleMs: Type.Integer(),
  idleAfterMs: Type.Integer(),
  activeTurns: Type.Integer(),
  activeModelCalls: Type.Integer(),
  /** Worker provisions in flight (absent from plugins older than this field). */
  activeProvisions: Type.Optional(Type.Integer()),
  fence: Type.Optional(Type.Object({ sinceMs: Type.Integer() })),
  deadlineAtMs: Type.Optional(Type.Integer()),
  /** Why sleep is due now, if it is. */
  due: Type.Optional(NotifyReasonSchema),
  /** Our cloud workers as the gateway lists them; null while the gateway is suspending (it answers no list then). */
  workers: Type.Union([Type.Array(WorkerSchema), Type.Null()]),
  suspension: SuspensionPhaseSchema,
  /** Scheduled wake (suspend.wakeLead set): the latest wake snapshot, the same the wake notification carries. */
  wake: Type.Optional(WakeSnapshotSchema),
  wakeLeadMs: Type.Optional(Type.Integer({ minimum: 0 })),
});
export type StatusResult = Static<typeof StatusResultSchema>;

export const ErrorBodySchema = Type.Object({ error: Type.Object({ type: Type.String(), message: Type.String() }) });
export type ErrorBody = Static<typeof ErrorBodySchema>;
