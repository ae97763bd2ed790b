// NDJSON streams for `runCommand` (C2) and `command.logs()` (C5). The SDK checks that the
// content type is exactly `application/x-ndjson` and decodes each network chunk with a plain
// `toString()`, so every line is written whole, in pure ASCII (non-ASCII escaped as \uXXXX).
import type { ServerResponse } from "node:http";

export const NDJSON = "application/x-ndjson";

/** JSON with every non-ASCII UTF-16 unit escaped, so a line never splits a multibyte character. */
export function asciiJson(value: unknown): string {
  return JSON.stringify(value).replace(
    /[\u007f-\uffff]/g,
    (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`,
  );
}

export function startNdjson(res: ServerResponse) {
  res.writeHead(200, { "content-type": NDJSON, "cache-control": "no-cache", "x-accel-buffering": "no" });
  res.flushHeaders();
  return {
    /** False when the client reads slower than lines come: the caller waits for `drain` before writing more. */
    line(value: unknown): boolean {
      if (res.writableEnded || res.destroyed) return true;
      return res.write(`${asciiJson(value)}\n`);
    },
    end() {
      if (!res.writableEnded) res.end();
    },
  };
}
