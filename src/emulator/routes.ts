// The endpoint table. Order matters: `/v2/sandboxes/{name}` would swallow the fixed segments
// `sessions`, `snapshots` and `drives` (and `snapshots/{id}` would swallow `tree`), so fixed
// paths come first. Those three are also refused as sandbox names (sandbox-settings.ts).
import { commandLogs, getCommand, killCommand, makeDirectory, readFile, runCommand, writeFiles } from "./commands.js";
import { type Ctx, type Handler, runningSession } from "./context.js";
import { deleteDrive, getDrive, getOrCreateDrive, listDrives } from "./drive-routes.js";
import { createSandbox, deleteSandbox, forkSandbox, getSandbox, listSandboxes, updateSandbox } from "./sandboxes.js";
import {
  extendTimeout,
  getSession,
  listSessions,
  snapshotSession,
  stopSession,
  updateNetworkPolicy,
} from "./sessions.js";
import { deleteSnapshot, getSnapshot, listSnapshots, snapshotTree } from "./snapshots.js";

interface Route {
  method: string;
  pattern: RegExp;
  handler: Handler;
}

const P = "([^/]+)";
const SESSION = `/v2/sandboxes/sessions/${P}`;

const table: Array<[string, string, Handler]> = [
  ["POST", "/v3/sandboxes", createSandbox],
  ["POST", "/v2/sandboxes", createSandbox],
  ["GET", "/v2/sandboxes", listSandboxes],
  ["GET", "/v2/sandboxes/sessions", listSessions],
  ["GET", SESSION, getSession],
  ["POST", `${SESSION}/stop`, stopSession],
  ["POST", `${SESSION}/extend-timeout`, extendTimeout],
  ["POST", `${SESSION}/network-policy`, updateNetworkPolicy],
  ["POST", `${SESSION}/snapshot`, snapshotSession],
  [
    "POST",
    `${SESSION}/interactive`,
    async (ctx) => ctx.interactive.open(runningSession(ctx, ctx.params[0]), ctx.req, ctx.res),
  ],
  ["POST", `${SESSION}/cmd`, runCommand],
  ["GET", `${SESSION}/cmd/${P}`, getCommand],
  ["GET", `${SESSION}/cmd/${P}/logs`, commandLogs],
  ["POST", `${SESSION}/cmd/${P}/kill`, killCommand],
  ["POST", `${SESSION}/fs/mkdir`, makeDirectory],
  ["POST", `${SESSION}/fs/write`, writeFiles],
  ["POST", `${SESSION}/fs/read`, readFile],
  ["GET", "/v2/sandboxes/snapshots", listSnapshots],
  ["GET", "/v2/sandboxes/snapshots/tree", snapshotTree],
  ["GET", `/v2/sandboxes/snapshots/${P}`, getSnapshot],
  ["DELETE", `/v2/sandboxes/snapshots/${P}`, deleteSnapshot],
  ["GET", "/v2/sandboxes/drives", listDrives],
  ["POST", `/v2/sandboxes/drives/${P}`, getOrCreateDrive],
  ["GET", `/v2/sandboxes/drives/${P}`, getDrive],
  ["DELETE", `/v2/sandboxes/drives/${P}`, (ctx) => deleteDrive(ctx, (id) => running(ctx, id))],
  ["GET", `/v2/sandboxes/${P}`, getSandbox],
  ["PATCH", `/v2/sandboxes/${P}`, updateSandbox],
  ["DELETE", `/v2/sandboxes/${P}`, deleteSandbox],
  ["POST", `/v2/sandboxes/${P}/fork`, forkSandbox],
];

const running = (ctx: Ctx, sessionId: string) => ctx.registry.sessions.get(sessionId)?.status === "running";

const routes: Route[] = table.map(([method, path, handler]) => ({
  method,
  pattern: new RegExp(`^${path}/?$`),
  handler,
}));

export type Match = { handler: Handler; params: string[] } | { methodNotAllowed: true } | undefined;

export function matchRoute(method: string, pathname: string): Match {
  let pathMatched = false;
  for (const route of routes) {
    const m = route.pattern.exec(pathname);
    if (!m) continue;
    if (route.method !== method) {
      pathMatched = true;
      continue;
    }
    return { handler: route.handler, params: m.slice(1).map((p) => decodeURIComponent(p)) };
  }
  return pathMatched ? { methodNotAllowed: true } : undefined;
}
