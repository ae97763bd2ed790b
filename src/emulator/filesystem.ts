// File endpoints F1–F3, performed INSIDE the sandbox as its default user (a short-lived process that
// joins the session's namespaces like a command does), never from the host: paths and symlinks resolve
// in the sandbox's own root, and the sandbox's permissions apply, so no request can read or write a
// host file or a file the default user may not touch (e.g. /etc/shadow). F2 is the SDK's gzip tarball
// (regular files only, names relative to `x-cwd`, PAX headers for long names): it is read with a real
// tar parser first, so a malformed upload is a 400 before anything is written, then re-packed with only
// regular files and extracted by the sandbox's own `tar`, leaving files owned by the default user.
import type { IncomingMessage, ServerResponse } from "node:http";
import path from "node:path";
import { pipeline } from "node:stream/promises";
import { createGunzip } from "node:zlib";
import { extract, pack } from "tar-stream";
import { badRequest, HttpError } from "./http.js";
import { SANDBOX_USER } from "./image.js";
import type { Holder } from "./isolation.js";
import { SANDBOX_CWD } from "./payloads.js";
import { type ProgramSpec, runToEnd } from "./sandbox-program.js";
import { SANDBOX_PATH } from "./sudo.js";

const NOT_FOUND = 44;
const FORBIDDEN = 45;
const READ_SCRIPT = `[ -f "$1" ] || exit ${NOT_FOUND}; [ -r "$1" ] || exit ${FORBIDDEN}; exec cat -- "$1"`;

export function resolveInSandbox(p: string, cwd = SANDBOX_CWD): string {
  return path.posix.resolve(path.posix.resolve("/", cwd), p);
}

/** A program inside the sandbox, as its default user, with plain C-locale messages (serve-script.ts). */
function inSandboxAsUser(argv: string[]): Omit<ProgramSpec, "stdin"> {
  return {
    argv,
    env: { PATH: SANDBOX_PATH, HOME: SANDBOX_USER.home, LANG: "C", LC_ALL: "C" },
    cwd: "/",
    user: SANDBOX_USER,
  };
}

function failure(operation: string, target: string, stderr: string): HttpError {
  // Permission first: tar reports a parent it may not create, then the file under it as missing.
  if (/Permission denied|Read-only file system|Operation not permitted/.test(stderr)) {
    return new HttpError(403, "permission_denied", `${operation} '${target}': Permission denied`);
  }
  if (/File exists/.test(stderr)) return new HttpError(400, "file_exists", `${operation} '${target}': File exists`);
  if (/No such file or directory|Not a directory/.test(stderr)) {
    return new HttpError(400, "file_not_found", `${operation} '${target}': No such file or directory`);
  }
  return new HttpError(400, "file_operation_failed", `${operation} '${target}' failed: ${stderr.slice(0, 500)}`);
}

export async function mkdirInSandbox(holder: Holder, p: string, cwd?: string): Promise<void> {
  const target = resolveInSandbox(p, cwd);
  const { code, stderr } = await runToEnd(holder.start.run, inSandboxAsUser(["/bin/mkdir", "--", target]));
  if (code !== 0) throw failure("mkdir: cannot create directory", target, stderr);
}

async function regularFiles(body: Buffer, base: string) {
  const files: Array<{ name: string; mode: number; data: Buffer }> = [];
  const parser = extract();
  parser.on("entry", (header, stream, next) => {
    const chunks: Buffer[] = [];
    stream.on("data", (c) => chunks.push(c as Buffer));
    stream.on("end", () => {
      if (header.type === "file" || header.type === "contiguous-file") {
        const name = resolveInSandbox(header.name, base).slice(1);
        if (name) files.push({ name, mode: (header.mode ?? 0o644) & 0o777, data: Buffer.concat(chunks) });
      }
      next();
    });
    stream.resume();
  });
  try {
    const gunzip = createGunzip();
    gunzip.end(body);
    await pipeline(gunzip, parser);
  } catch (error) {
    throw badRequest(`Request body is not a gzip tar archive: ${(error as Error).message}`);
  }
  return files;
}

function repack(files: Array<{ name: string; mode: number; data: Buffer }>): Promise<Buffer> {
  const archive = pack();
  for (const file of files) archive.entry({ name: file.name, mode: file.mode, type: "file" }, file.data);
  archive.finalize();
  const chunks: Buffer[] = [];
  return new Promise((resolve, reject) => {
    archive.on("data", (c) => chunks.push(c as Buffer));
    archive.once("end", () => resolve(Buffer.concat(chunks)));
    archive.once("error", reject);
  });
}

/** Writes every regular file of the upload, creating parents, as the default user. */
export async function writeTarball(holder: Holder, req: IncomingMessage, body: Buffer): Promise<number> {
  const base = resolveInSandbox(String(req.headers["x-cwd"] ?? "/"), "/");
  const files = await regularFiles(body, base);
  if (files.length === 0) return 0;
  const argv = ["/usr/bin/tar", "-x", "-p", "--no-same-owner", "-C", "/", "-f", "-"];
  const { code, stderr } = await runToEnd(holder.start.run, inSandboxAsUser(argv), await repack(files));
  if (code !== 0) throw failure("write", files.length === 1 ? `/${files[0]!.name}` : base, stderr);
  return files.length;
}

/** Streams a file's bytes; 404 when it is missing or not a regular file, 403 when unreadable. */
export async function sendFile(holder: Holder, res: ServerResponse, p: string, cwd?: string): Promise<void> {
  const target = resolveInSandbox(p, cwd);
  const program = await holder.start.run(inSandboxAsUser(["/bin/sh", "-c", READ_SCRIPT, "read", target]));
  program.stderr.resume();
  const exit = program.closed;
  const out = program.stdout;
  const first = await new Promise<Buffer | null>((resolve) => {
    const onData = (chunk: Buffer) => {
      out.pause();
      out.off("end", onEnd);
      resolve(chunk);
    };
    const onEnd = () => {
      out.off("data", onData);
      resolve(null);
    };
    out.once("data", onData);
    out.once("end", onEnd);
  });
  if (first === null) {
    const code = await exit;
    if (code === NOT_FOUND) throw new HttpError(404, "file_not_found", `File not found: ${target}`);
    if (code === FORBIDDEN) throw new HttpError(403, "permission_denied", `Permission denied: ${target}`);
    if (code !== 0) throw new HttpError(400, "file_operation_failed", `Could not read ${target}`);
  }
  res.writeHead(200, { "content-type": "application/octet-stream" });
  if (first) res.write(first);
  await pipeline(out, res);
  if ((await exit) !== 0) res.destroy();
}
