// File endpoints F1–F3, performed from the host through `/proc/<holder>/root`, which shows the
// session's own mount namespace, so paths are exactly the sandbox's view and never another
// sandbox's. F2 is the SDK's gzip tarball (regular files only, names relative to `x-cwd`,
// PAX headers for long names), read with a real tar parser; parents are created as needed.
// Caveat: an absolute symlink inside the sandbox is resolved against the host root here.
import { createReadStream } from "node:fs";
import { chmod, mkdir, stat, writeFile } from "node:fs/promises";
import type { IncomingMessage, ServerResponse } from "node:http";
import path from "node:path";
import { pipeline } from "node:stream/promises";
import { createGunzip } from "node:zlib";
import { extract } from "tar-stream";
import { badRequest, HttpError } from "./http.js";
import { type Holder, viewPath } from "./isolation.js";
import { SANDBOX_CWD } from "./payloads.js";

export function resolveInSandbox(p: string, cwd = SANDBOX_CWD): string {
  return path.posix.resolve(path.posix.resolve("/", cwd), p);
}

export async function mkdirInSandbox(holder: Holder, p: string, cwd?: string): Promise<void> {
  const target = resolveInSandbox(p, cwd);
  try {
    await mkdir(viewPath(holder, target));
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === "EEXIST")
      throw new HttpError(400, "file_exists", `mkdir: cannot create directory '${target}': File exists`);
    if (code === "ENOENT") {
      throw new HttpError(
        400,
        "file_not_found",
        `mkdir: cannot create directory '${target}': No such file or directory`,
      );
    }
    throw error;
  }
}

/** Buffers the whole archive first, so a malformed upload is a 400 before anything is written. */
export async function writeTarball(holder: Holder, req: IncomingMessage, body: Buffer): Promise<number> {
  const base = resolveInSandbox(String(req.headers["x-cwd"] ?? "/"), "/");
  const files: Array<{ name: string; mode: number; data: Buffer }> = [];
  const parser = extract();
  parser.on("entry", (header, stream, next) => {
    const chunks: Buffer[] = [];
    stream.on("data", (c) => chunks.push(c as Buffer));
    stream.on("end", () => {
      if (header.type === "file" || header.type === "contiguous-file") {
        files.push({ name: header.name, mode: header.mode ?? 0o644, data: Buffer.concat(chunks) });
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
  for (const file of files) {
    const target = viewPath(holder, resolveInSandbox(file.name, base));
    await mkdir(path.dirname(target), { recursive: true });
    await writeFile(target, file.data);
    await chmod(target, file.mode & 0o7777);
  }
  return files.length;
}

export async function sendFile(holder: Holder, res: ServerResponse, p: string, cwd?: string): Promise<void> {
  const target = viewPath(holder, resolveInSandbox(p, cwd));
  const info = await stat(target).catch(() => undefined);
  if (!info?.isFile()) throw new HttpError(404, "file_not_found", `File not found: ${resolveInSandbox(p, cwd)}`);
  res.writeHead(200, { "content-type": "application/octet-stream", "content-length": info.size });
  await pipeline(createReadStream(target), res);
}
