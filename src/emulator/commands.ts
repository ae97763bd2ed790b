// Command and file endpoints C1–C6, F1–F3. `runCommand` (wait+logs) streams NDJSON: the
// command line first, live output, then the finished command; detached runs answer at once
// with `exitCode:null`. `wait` sends headers immediately (the SDK's headers timeout is 300 s)
// and the body at exit. Commands run as the sandbox's default user, or as sandbox root under
// `sudo` (executor.ts), with the matching HOME/USER.
import type { ServerResponse } from "node:http";
import type { Ctx } from "./context.js";
import { runningSession, sessionOr404 } from "./context.js";
import { networkModeOf, proxyEnv } from "./egress.js";
import { syncDirectRoutes } from "./egress-routes.js";
import { CommandProcess } from "./executor.js";
import { mkdirInSandbox, resolveInSandbox, sendFile, writeTarball } from "./filesystem.js";
import { badRequest, field, notFound, readBody, readJson, sendJson } from "./http.js";
import { asciiJson, startNdjson } from "./ndjson.js";
import { commandPayload } from "./payloads.js";
import { commandEnv } from "./program-env.js";

function streamError(command: CommandProcess) {
  return {
    stream: "error",
    data: { code: "sandbox_stopped", message: `The sandbox stopped while command ${command.id} was running` },
  };
}

const COMMAND_LOG_LIMIT = 10_000;

/** C1/C2: POST …/sessions/{sid}/cmd. */
export async function runCommand(ctx: Ctx): Promise<void> {
  const session = runningSession(ctx, ctx.params[0]);
  const body = await readJson(ctx.req);
  const name = field.string(body, "command");
  if (!name) throw badRequest("`command` is required");
  const args = field.stringArray(body, "args") ?? [];
  const env = field.stringRecord(body, "env") ?? {};
  const sudo = field.boolean(body, "sudo") ?? false;
  const timeoutMs = field.number(body, "timeout");
  const cwd = resolveInSandbox(field.string(body, "cwd") ?? ".");
  const wait = field.boolean(body, "wait") ?? false;
  // The session may have stopped while the body was read, or while its egress proxy started.
  let live = runningSession(ctx, session.id);
  const network = networkModeOf(live.networkPolicy);
  await syncDirectRoutes(live);
  await ctx.lifecycle.routeAccess(live);
  live = runningSession(ctx, session.id);
  let proxy: Record<string, string> = {};
  if (network === "proxied") {
    try {
      proxy = proxyEnv((await ctx.lifecycle.egressOf(live)).port);
    } finally {
      live = runningSession(ctx, session.id);
    }
  }
  const command = new CommandProcess(live.holder!, {
    sessionId: live.id,
    name,
    args,
    cwd,
    env: commandEnv(ctx, live, env, sudo, proxy),
    timeoutMs,
    sudo,
  });
  live.commands.set(command.id, command);
  ctx.registry.commandLog.push({
    sandboxName: live.sandboxName,
    sessionId: live.id,
    command: name,
    args,
    cwd,
    sudo,
    at: Date.now(),
  });
  if (ctx.registry.commandLog.length > COMMAND_LOG_LIMIT) ctx.registry.commandLog.shift();
  if (!wait) {
    sendJson(ctx.res, 200, { command: commandPayload(command) });
    return;
  }
  const out = startNdjson(ctx.res);
  out.line({ command: commandPayload(command) });
  command.follow(
    (chunk) => paced(command, ctx.res, out.line(chunk)),
    () => {
      out.line(command.interrupted ? streamError(command) : { command: commandPayload(command) });
      out.end();
    },
  );
}

function commandOf(ctx: Ctx): CommandProcess {
  const session = sessionOr404(ctx, ctx.params[0]);
  const command = session.commands.get(ctx.params[1] ?? "");
  if (!command) throw notFound(`Command ${ctx.params[1]}`);
  return command;
}

/** C3/C4: GET …/cmd/{cid}[?wait=true]; finished commands stay readable after their session stops. */
export async function getCommand(ctx: Ctx): Promise<void> {
  const command = commandOf(ctx);
  if (ctx.url.searchParams.get("wait") !== "true" || command.exitCode !== null) {
    sendJson(ctx.res, 200, { command: commandPayload(command) });
    return;
  }
  ctx.res.writeHead(200, { "content-type": "application/json" });
  ctx.res.flushHeaders();
  const onClose = () => command.off("exit", onExit);
  const onExit = () => {
    ctx.res.off("close", onClose);
    ctx.res.end(asciiJson({ command: commandPayload(command) }));
  };
  command.once("exit", onExit);
  ctx.res.once("close", onClose);
}

/**
 * Backpressure from a follower's connection to the command: a write that filled the response's buffer holds the
 * command's output until the buffer drains (or the connection closes).
 */
function paced(command: CommandProcess, res: ServerResponse, written: boolean): void {
  if (written || command.isHeldBy(res)) return;
  command.hold(res);
  if (!command.isHeldBy(res)) return; // the program has ended: nothing left to hold back
  const release = () => {
    res.off("drain", release);
    res.off("close", release);
    command.release(res);
  };
  res.once("drain", release);
  res.once("close", release);
}

/** C5: GET …/cmd/{cid}/logs: full replay, then live output, ending at exit. */
export async function commandLogs(ctx: Ctx): Promise<void> {
  const command = commandOf(ctx);
  const out = startNdjson(ctx.res);
  const unsubscribe = command.follow(
    (chunk) => paced(command, ctx.res, out.line(chunk)),
    () => {
      if (command.interrupted) out.line(streamError(command));
      out.end();
    },
  );
  ctx.res.once("close", unsubscribe);
}

/** C6: POST …/cmd/{cid}/kill {signal}. */
export async function killCommand(ctx: Ctx): Promise<void> {
  runningSession(ctx, ctx.params[0]);
  const command = commandOf(ctx);
  const signal = field.number(await readJson(ctx.req), "signal") ?? 15;
  if (!Number.isInteger(signal) || signal < 1 || signal > 64) throw badRequest("`signal` must be a signal number");
  command.kill(signal);
  sendJson(ctx.res, 200, { command: commandPayload(command) });
}

/** F1: POST …/fs/mkdir {path, cwd?}. */
export async function makeDirectory(ctx: Ctx): Promise<void> {
  const session = runningSession(ctx, ctx.params[0]);
  const body = await readJson(ctx.req);
  const path = field.string(body, "path");
  if (!path) throw badRequest("`path` is required");
  await mkdirInSandbox(session.holder!, path, field.string(body, "cwd"));
  sendJson(ctx.res, 200, {});
}

/** F2: POST …/fs/write, a gzip tarball. */
export async function writeFiles(ctx: Ctx): Promise<void> {
  const session = runningSession(ctx, ctx.params[0]);
  const body = await readBody(ctx.req);
  await writeTarball(runningSession(ctx, session.id).holder!, ctx.req, body);
  sendJson(ctx.res, 200, {});
}

/** F3: POST …/fs/read {path, cwd?}: raw bytes, or 404 when the file is missing. */
export async function readFile(ctx: Ctx): Promise<void> {
  const session = runningSession(ctx, ctx.params[0]);
  const body = await readJson(ctx.req);
  const path = field.string(body, "path");
  if (!path) throw badRequest("`path` is required");
  await sendFile(session.holder!, ctx.res, path, field.string(body, "cwd"));
}
