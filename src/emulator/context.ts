// What every endpoint handler receives: the parsed request and the emulator's shared state (state.ts).
import type { IncomingMessage, ServerResponse } from "node:http";
import { HttpError, notFound } from "./http.js";
import type { SandboxRecord, SessionRecord } from "./registry.js";
import type { EmulatorState } from "./state.js";

export interface Ctx extends EmulatorState {
  req: IncomingMessage;
  res: ServerResponse;
  url: URL;
  /** Decoded path parameters, in route order. */
  params: string[];
}

export type Handler = (ctx: Ctx) => Promise<void>;

export function sandboxOr404(ctx: Ctx, name: string | undefined): SandboxRecord {
  const sandbox = name === undefined ? undefined : ctx.registry.sandboxes.get(name);
  if (!sandbox) throw notFound(`Sandbox ${name}`);
  return sandbox;
}

export function sessionOr404(ctx: Ctx, id: string | undefined): SessionRecord {
  const session = id === undefined ? undefined : ctx.registry.sessions.get(id);
  if (!session) throw notFound(`Session ${id}`);
  return session;
}

/** Session-scoped calls: 410 once stopped (the SDK then auto-resumes), 422 while it is stopping. */
export function runningSession(ctx: Ctx, id: string | undefined): SessionRecord {
  const session = sessionOr404(ctx, id);
  if (session.status === "running" && session.holder) return session;
  if (session.status === "stopping") throw new HttpError(422, "sandbox_stopping", "The sandbox is stopping");
  if (session.status === "snapshotting")
    throw new HttpError(422, "sandbox_snapshotting", "The sandbox is snapshotting");
  throw new HttpError(410, "sandbox_stopped", `Session ${session.id} is ${session.status}`);
}
