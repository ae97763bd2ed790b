// What the reference host checks before doing any work for a request: a bounded body (refused on its declared
// length before a byte is read, and again while it streams, so an oversized or endless body is never buffered)
// and the shared secret that authenticates `/message` (compared in constant time).
import { createHash, timingSafeEqual } from "node:crypto";

/** Default bound on a request body: a notification is well under 1 KiB, a chat message a few KiB. */
export const DEFAULT_MAX_BODY_BYTES = 64 * 1024;

/** A request body over the limit (declared or streamed): answer 413 and read no further. */
export class BodyTooLargeError extends Error {
  constructor(
    readonly limitBytes: number,
    readonly declaredBytes?: number,
  ) {
    super(
      declaredBytes === undefined
        ? `request body exceeds ${limitBytes} bytes`
        : `request body declares ${declaredBytes} bytes, over the limit of ${limitBytes}`,
    );
    this.name = "BodyTooLargeError";
  }
}

/**
 * Reads at most `maxBytes` of `chunks`: throws BodyTooLargeError before reading when `contentLength` already says
 * more, and as soon as the bytes read pass the limit otherwise (the rest is left unread).
 */
export async function readBounded(
  chunks: AsyncIterable<Uint8Array> | null,
  contentLength: string | null | undefined,
  maxBytes: number,
): Promise<Buffer> {
  const declared = contentLength ? Number(contentLength) : undefined;
  if (declared !== undefined && Number.isFinite(declared) && declared > maxBytes) {
    throw new BodyTooLargeError(maxBytes, declared);
  }
  const parts: Buffer[] = [];
  let total = 0;
  for await (const chunk of chunks ?? []) {
    total += chunk.byteLength;
    if (total > maxBytes) throw new BodyTooLargeError(maxBytes);
    parts.push(Buffer.from(chunk));
  }
  return Buffer.concat(parts);
}

/** Whether `authorization` is `Bearer <secret>`; digests first, so the comparison's time says nothing of lengths. */
export function bearerMatches(authorization: string | null | undefined, secret: string): boolean {
  const digest = (value: string) => createHash("sha256").update(value).digest();
  return timingSafeEqual(digest(authorization ?? ""), digest(`Bearer ${secret}`));
}
