// File endpoints F1–F3, performed INSIDE the sandbox as its default user (a short-lived process that
// joins the session's namespaces like a command does), never from the host: paths and symlinks resolve
// in the sandbox's own root, and the sandbox's permissions apply, so no request can read or write a
// host file or a file the default user may not touch (e.g. /etc/shadow). F2 is the SDK's gzip tarball
// (regular files only, names relative to `x-cwd`, PAX headers for long names): it is read with a real
// tar parser first, so a malformed upload is a 400 and one that unpacks to more than WRITE_UNPACKED_LIMIT
// a 413 before anything is written, then unpacked again, re-packed with only regular files and extracted
// by the sandbox's own `tar`, leaving files owned by the default user. Both passes stream, file data is
// never gathered: the emulator's memory does not grow with what an upload unpacks to.
import type { IncomingMessage, ServerResponse } from "node:http";
import path from "node:path";
import { type Readable, Transform } from "node:stream";
import { pipeline } from "node:stream/promises";
import { createGunzip } from "node:zlib";
import { extract, pack } from "tar-stream";
import { BODY_LIMIT, badRequest, HttpError } from "./http.js";
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

/**
 * What one writeFiles tarball may unpack to (the tar stream, headers included): as much as the largest body the
 * API reads, so a compressed upload can carry no more than an uncompressed one could. Vercel documents no limit.
 */
export const WRITE_UNPACKED_LIMIT = BODY_LIMIT;

const unpackedTooLarge = () =>
  new HttpError(
    413,
    "payload_too_large",
    `Request body unpacks to more than ${WRITE_UNPACKED_LIMIT} bytes (${WRITE_UNPACKED_LIMIT / 1024 ** 2} MiB): write fewer or smaller files per call`,
  );

/** Passes bytes on, failing the stream once more than `limit` went through. */
function capped(limit: number): Transform {
  let total = 0;
  return new Transform({
    transform(chunk: Buffer, _encoding, callback) {
      total += chunk.length;
      if (total > limit) callback(unpackedTooLarge());
      else callback(null, chunk);
    },
  });
}

interface RegularFile {
  /** Resolved in the sandbox, without the leading "/". */
  name: string;
  mode: number;
  size: number;
}

/** Unpacks the upload as a stream: `onFile` consumes each regular file's data; any other entry is skipped. */
async function eachRegularFile(
  body: Buffer,
  base: string,
  onFile: (file: RegularFile, data: Readable) => Promise<void>,
): Promise<void> {
  const parser = extract();
  parser.on("entry", (header, stream, next) => {
    const name =
      header.type === "file" || header.type === "contiguous-file" ? resolveInSandbox(header.name, base).slice(1) : "";
    const done = name
      ? onFile({ name, mode: (header.mode ?? 0o644) & 0o777, size: header.size ?? 0 }, stream as unknown as Readable)
      : new Promise<void>((resolve) => {
          stream.on("end", resolve);
          stream.resume();
        });
    done.then(() => next(), next);
  });
  const gunzip = createGunzip();
  gunzip.end(body);
  await pipeline(gunzip, capped(WRITE_UNPACKED_LIMIT), parser);
}

/** The first pass: checks the whole upload (a 400 or 413 before anything is written) and counts its files. */
async function checkedUpload(body: Buffer, base: string): Promise<{ count: number; first?: string }> {
  let count = 0;
  let first: string | undefined;
  try {
    await eachRegularFile(body, base, (file, data) => {
      count++;
      first ??= file.name;
      return new Promise((resolve, reject) => {
        data.on("end", resolve);
        data.on("error", reject);
        data.resume();
      });
    });
  } catch (error) {
    if (error instanceof HttpError) throw error;
    throw badRequest(`Request body is not a gzip tar archive: ${(error as Error).message}`);
  }
  return { count, first };
}

/** Writes every regular file of the upload, creating parents, as the default user. */
export async function writeTarball(holder: Holder, req: IncomingMessage, body: Buffer): Promise<number> {
  const base = resolveInSandbox(String(req.headers["x-cwd"] ?? "/"), "/");
  const { count, first } = await checkedUpload(body, base);
  if (count === 0) return 0;
  const argv = ["/usr/bin/tar", "-x", "-p", "--no-same-owner", "-C", "/", "-f", "-"];
  const program = await holder.start.run({ ...inSandboxAsUser(argv), stdin: true });
  let stderr = "";
  program.stderr.on("data", (d) => {
    if (stderr.length < 4096) stderr += d;
  });
  program.stdout.resume();
  const stdin = program.stdin!;
  stdin.on("error", () => {}); // tar may exit before reading it all: its exit code tells
  // The second pass: each regular file re-packed as it is unpacked, at the pace tar reads.
  const archive = pack();
  archive.pipe(stdin);
  let packed = false;
  const packing = eachRegularFile(
    body,
    base,
    (file, data) =>
      new Promise<void>((resolve, reject) => {
        const entry = archive.entry({ name: file.name, mode: file.mode, size: file.size, type: "file" }, (error) =>
          error ? reject(error) : resolve(),
        );
        data.pipe(entry as unknown as NodeJS.WritableStream);
      }),
  ).then(() => {
    packed = true;
    archive.finalize();
  });
  // A tar that ended before the archive did will read no more: stop packing.
  void program.exited.then(() => {
    if (!packed) archive.destroy();
  });
  try {
    await packing;
  } catch {
    // Tar went away (its code and stderr say why), or the archive stopped short: tar sees it truncated.
    stdin.destroy();
  }
  const code = await program.closed;
  if (code !== 0 || !packed) throw failure("write", count === 1 ? `/${first}` : base, stderr.trim());
  return count;
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
