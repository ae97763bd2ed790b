// The worker cap's two authenticated routes (`maxWorkers`), as TypeBox schemas: the plugin calls them on its own
// gateway over loopback (so `sessions.reclaim` runs inside an authenticated request, as the suspend handshake's
// reclaim does), and an operator or host may call them too. docs/protocol.md describes them.
import { type Static, Type } from "@sinclair/typebox";
import { ROUTE_PREFIX } from "./protocol.js";

export const WORKER_ROUTES = {
  workers: `${ROUTE_PREFIX}/workers`,
  reclaim: `${ROUTE_PREFIX}/workers/reclaim`,
  /** GET `?session=<key>`: that session's worker placement as core holds it (the cap's `before_dispatch` hook). */
  placement: `${ROUTE_PREFIX}/workers/placement`,
  /** POST: makes room at the cap before a host places a session or hands over a message no hook sees. */
  room: `${ROUTE_PREFIX}/workers/room`,
} as const;

const LeaseId = Type.String({ pattern: "^vsb_[0-9a-f]{24}$" });

export const CapWorkerSchema = Type.Object({
  leaseId: Type.String(),
  environmentId: Type.String(),
  state: Type.String(),
  /** Session keys (or ids, when a key is unknown) attached to the worker. */
  sessions: Type.Array(Type.String(), { maxItems: 64 }),
  /** In an active turn (a run or model call in flight for one of its sessions), or not yet placed. */
  busy: Type.Boolean(),
  lastActiveMs: Type.Union([Type.Integer(), Type.Null()]),
});

export const WorkersResultSchema = Type.Object({ workers: Type.Array(CapWorkerSchema, { maxItems: 1_024 }) });
export type WorkersResult = Static<typeof WorkersResultSchema>;

export const ReclaimRequestSchema = Type.Object(
  { among: Type.Array(LeaseId, { minItems: 1, maxItems: 256, uniqueItems: true }) },
  { additionalProperties: false },
);
export type ReclaimRequest = Static<typeof ReclaimRequestSchema>;

export const ReclaimResultSchema = Type.Union([
  Type.Object({ status: Type.Literal("reclaimed"), worker: CapWorkerSchema }),
  Type.Object({
    status: Type.Literal("busy"),
    busy: Type.Integer({ minimum: 0 }),
    candidates: Type.Integer({ minimum: 0 }),
  }),
]);
export type ReclaimResult = Static<typeof ReclaimResultSchema>;

/** A session key as the placement route takes it (`?session=`). */
export const SESSION_KEY_MAX = 512;

export const PlacementResultSchema = Type.Object({
  placement: Type.Union([
    Type.Null(),
    Type.Object({
      /** Core's placement state (active, reclaimed, provisioning, …). */
      state: Type.String({ maxLength: 64 }),
      providerId: Type.Optional(Type.String({ maxLength: 128 })),
      profileId: Type.Optional(Type.String({ maxLength: 128 })),
      leaseId: Type.Optional(LeaseId),
    }),
  ]),
});
export type PlacementResult = Static<typeof PlacementResultSchema>;

/** What a host asks room for: a session about to get a message, or a placement of a profile. */
export const RoomRequestSchema = Type.Union([
  Type.Object({ session: Type.String({ minLength: 1, maxLength: SESSION_KEY_MAX }) }, { additionalProperties: false }),
  Type.Object({ profileId: Type.String({ minLength: 1, maxLength: 128 }) }, { additionalProperties: false }),
]);
export type RoomRequest = Static<typeof RoomRequestSchema>;

/**
 * `room`: there was room; `reclaimed`: an idle worker was reclaimed for it; `waited`: room came while it waited;
 * `busy`: every worker stayed busy for the profile's capWait; `failed`: the gateway could not tell; `skipped`: no
 * cap applies (no placement of ours to make again, or a profile without maxWorkers).
 */
export const RoomResultSchema = Type.Object({
  outcome: Type.Union(["room", "reclaimed", "waited", "busy", "failed", "skipped"].map((o) => Type.Literal(o))),
});
export type RoomResult = Static<typeof RoomResultSchema>;
