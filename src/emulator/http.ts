// Response helpers for the loopback API. The SDK parses every non-2xx body as
// `{"error":{"code","message"}}` and drives its recovery from `code` (auto-resume on 410,
// getOrCreate on 404 / `snapshot_not_found`), so every failure leaves through `HttpError`.
import type { IncomingMessage, ServerResponse } from "node:http";

/** A failure the client should see, with the status and `error.code` the SDK reacts to. */
export class HttpError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly headers: Record<string, string> = {},
    /** Extra keys of the `error` object, e.g. Vercel's `invalidToken: true`. */
    readonly details: Record<string, unknown> = {},
  ) {
    super(message);
    this.name = "HttpError";
  }
}

export const notFound = (what: string) => new HttpError(404, "not_found", `${what} was not found`);
export const badRequest = (message: string) => new HttpError(400, "bad_request", message);

/** The largest body any endpoint reads: a writeFiles tarball (filesystem.ts bounds what it unpacks to). */
export const BODY_LIMIT = 256 * 1024 * 1024;
/** The largest JSON body: every JSON endpoint takes a few settings, a command line or a policy, far below it. */
export const JSON_BODY_LIMIT = 1024 * 1024;

/**
 * The body as raw bytes, refused with 413 once it passes `limit` (or declares a length past it): what arrives
 * after that is read and dropped, never kept, so the answer reaches a client still sending. Empty-body POSTs
 * (stop, snapshot) arrive with a JSON content type.
 */
export function readBody(req: IncomingMessage, limit = BODY_LIMIT, what = "Request body"): Promise<Buffer> {
  const tooLarge = () => {
    const mib = limit % (1024 * 1024) === 0 ? ` (${limit / (1024 * 1024)} MiB)` : "";
    return new HttpError(413, "payload_too_large", `${what} is larger than ${limit} bytes${mib}`);
  };
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const settle = (error?: Error) => {
      req.off("data", onData);
      req.off("end", onEnd);
      req.off("error", onError);
      req.off("close", onClose);
      if (error) {
        req.on("error", () => {});
        req.resume(); // drop the rest: the connection stays usable and nothing more is held
        reject(error);
      } else resolve(Buffer.concat(chunks, size));
    };
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size > limit) settle(tooLarge());
      else chunks.push(chunk);
    };
    const onEnd = () => settle();
    const onError = (error: Error) => settle(error);
    const onClose = () => settle(new Error("The request was aborted before its body ended"));
    if (Number(req.headers["content-length"]) > limit) return settle(tooLarge());
    if (req.destroyed) return settle(new Error("The request was aborted before its body ended"));
    req.on("data", onData);
    req.once("end", onEnd);
    req.once("error", onError);
    req.once("close", onClose);
  });
}

/** Parses a JSON object body of at most JSON_BODY_LIMIT bytes; an empty body is `{}`; anything else that is not an object is a 400. */
export async function readJson(req: IncomingMessage): Promise<Record<string, unknown>> {
  const raw = (await readBody(req, JSON_BODY_LIMIT, "Request JSON body")).toString("utf8").trim();
  if (raw === "") return {};
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw);
  } catch {
    throw badRequest("Request body is not valid JSON");
  }
  if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) {
    throw badRequest("Request body must be a JSON object");
  }
  return parsed as Record<string, unknown>;
}

export function sendJson(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) {
  if (res.headersSent) {
    res.end();
    return;
  }
  const text = JSON.stringify(body);
  res.writeHead(status, {
    "content-type": "application/json",
    "content-length": Buffer.byteLength(text),
    ...headers,
  });
  res.end(text);
}

export function sendError(res: ServerResponse, error: unknown) {
  if (error instanceof HttpError) {
    sendJson(
      res,
      error.status,
      { error: { code: error.code, message: error.message, ...error.details } },
      error.headers,
    );
    return;
  }
  const message = error instanceof Error ? error.message : String(error);
  sendJson(res, 500, { error: { code: "internal_error", message } });
}

/** Field readers that turn a wrong type into a 400 instead of a crash further down. */
export const field = {
  string(body: Record<string, unknown>, key: string): string | undefined {
    const v = body[key];
    if (v === undefined || v === null) return undefined;
    if (typeof v !== "string") throw badRequest(`\`${key}\` must be a string`);
    return v;
  },
  number(body: Record<string, unknown>, key: string): number | undefined {
    const v = body[key];
    if (v === undefined || v === null) return undefined;
    if (typeof v !== "number" || !Number.isFinite(v) || v < 0)
      throw badRequest(`\`${key}\` must be a non-negative number`);
    return v;
  },
  boolean(body: Record<string, unknown>, key: string): boolean | undefined {
    const v = body[key];
    if (v === undefined || v === null) return undefined;
    if (typeof v !== "boolean") throw badRequest(`\`${key}\` must be a boolean`);
    return v;
  },
  stringArray(body: Record<string, unknown>, key: string): string[] | undefined {
    const v = body[key];
    if (v === undefined || v === null) return undefined;
    if (!Array.isArray(v) || v.some((x) => typeof x !== "string"))
      throw badRequest(`\`${key}\` must be a string array`);
    return v as string[];
  },
  stringRecord(body: Record<string, unknown>, key: string): Record<string, string> | undefined {
    const v = body[key];
    if (v === undefined || v === null) return undefined;
    if (typeof v !== "object" || Array.isArray(v) || Object.values(v).some((x) => typeof x !== "string")) {
      throw badRequest(`\`${key}\` must be an object of strings`);
    }
    return v as Record<string, string>;
  },
  object(body: Record<string, unknown>, key: string): Record<string, unknown> | undefined {
    const v = body[key];
    if (v === undefined || v === null) return undefined;
    if (typeof v !== "object" || Array.isArray(v)) throw badRequest(`\`${key}\` must be an object`);
    return v as Record<string, unknown>;
  },
};
