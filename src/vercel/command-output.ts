// A command's output is read in bounded memory in its one request. The SDK's waiting `runCommand` (one
// `POST …/cmd` answered with an NDJSON stream: the command, its log lines, the finished command) gathers every
// log line into strings, and the box is untrusted: it may print without end. So the client seam's `fetch` passes
// that stream through a filter set up for the call (`limitOutput`, carried to the request by AsyncLocalStorage):
// "tail" keeps only the last `bytes` of each stream (held until the command ends, then handed to the SDK),
// "whole" hands lines on as they come and ends the stream with an error line once a stream passes `bytes`.
import { AsyncLocalStorage } from "node:async_hooks";

type Fetch = typeof globalThis.fetch;
type Stream = "stdout" | "stderr";

export interface OutputLimit {
  keep: "tail" | "whole";
  bytes: number;
}

/** What the filter saw of one call: filled in as the stream passes. */
export interface OutputTally {
  readonly limit: OutputLimit;
  cmdId?: string;
  dropped: Record<Stream, number>;
  /** The stream that passed the limit, keeping whole. */
  overflowed?: Stream;
}

/** The error line the SDK turns into a StreamError when a stream kept whole passes its limit. */
export const OUTPUT_TOO_LARGE = "output_too_large";
/** A line longer than this is not a log line the API sends: the stream is cut there. */
const LINE_LIMIT = 8 * 1024 * 1024;
const COMMAND_POST = /\/v2\/sandboxes\/sessions\/[^/]+\/cmd(\?|$)/;

const calls = new AsyncLocalStorage<OutputTally>();

/** A fresh tally for one call under `limit`. */
export function outputTally(limit: OutputLimit): OutputTally {
  return { limit, dropped: { stdout: 0, stderr: 0 } };
}

/** Runs `work` (one SDK `runCommand`) with its output bounded by the tally's limit; the tally fills in as it runs. */
export function limitOutput<T>(tally: OutputTally, work: () => Promise<T>): Promise<T> {
  return calls.run(tally, work);
}

/** The SDK's fetch, with the NDJSON answer of a command run under `limitOutput` filtered as it arrives. */
export function boundingCommandOutput(base: Fetch): Fetch {
  return async (input, init) => {
    const response = await base(input, init);
    const tally = calls.getStore();
    const method = init?.method ?? (input instanceof Request ? input.method : "GET");
    const url = typeof input === "string" ? input : input instanceof URL ? input.href : input.url;
    if (!tally || method !== "POST" || !COMMAND_POST.test(url) || !response.body) return response;
    if (response.headers.get("content-type") !== "application/x-ndjson") return response;
    return new Response(response.body.pipeThrough(filter(tally)), {
      status: response.status,
      statusText: response.statusText,
      headers: response.headers,
    });
  };
}

function filter(tally: OutputTally): TransformStream<Uint8Array, Uint8Array> {
  const decoder = new TextDecoder();
  const encoder = new TextEncoder();
  const held: Record<Stream, Array<{ line: string; bytes: number }>> = { stdout: [], stderr: [] };
  const heldBytes: Record<Stream, number> = { stdout: 0, stderr: 0 };
  const seen: Record<Stream, number> = { stdout: 0, stderr: 0 };
  let partial = "";
  let ended = false;

  const flushHeld = (out: TransformStreamDefaultController<Uint8Array>) => {
    for (const stream of ["stdout", "stderr"] as const) {
      for (const { line } of held[stream]) out.enqueue(encoder.encode(`${line}\n`));
      held[stream] = [];
      heldBytes[stream] = 0;
    }
  };

  const onLine = (line: string, out: TransformStreamDefaultController<Uint8Array>) => {
    if (ended || line.length === 0) return;
    let parsed: { command?: { id?: unknown }; stream?: unknown; data?: unknown };
    try {
      parsed = JSON.parse(line);
    } catch {
      out.enqueue(encoder.encode(`${line}\n`)); // the SDK's own parser reports it
      return;
    }
    const stream = parsed.stream;
    if ((stream !== "stdout" && stream !== "stderr") || typeof parsed.data !== "string") {
      if (parsed.command && typeof parsed.command.id === "string") tally.cmdId ??= parsed.command.id;
      // The command's first and last lines, an error line: the held tail goes out before the finish.
      if (parsed.command) flushHeld(out);
      out.enqueue(encoder.encode(`${line}\n`));
      return;
    }
    const bytes = Buffer.byteLength(parsed.data, "utf8");
    seen[stream] += bytes;
    if (tally.limit.keep === "whole") {
      if (seen[stream] > tally.limit.bytes) {
        tally.overflowed = stream;
        ended = true;
        const message = `the command's ${stream} passed ${tally.limit.bytes} bytes`;
        out.enqueue(
          encoder.encode(`${JSON.stringify({ stream: "error", data: { code: OUTPUT_TOO_LARGE, message } })}\n`),
        );
        out.terminate();
        return;
      }
      out.enqueue(encoder.encode(`${line}\n`));
      return;
    }
    held[stream].push({ line, bytes });
    heldBytes[stream] += bytes;
    while (held[stream].length > 1 && heldBytes[stream] - held[stream][0]!.bytes >= tally.limit.bytes) {
      const old = held[stream].shift()!;
      heldBytes[stream] -= old.bytes;
      tally.dropped[stream] += old.bytes;
    }
  };

  return new TransformStream({
    transform(chunk, out) {
      partial += decoder.decode(chunk, { stream: true });
      let newline = partial.indexOf("\n");
      while (newline !== -1) {
        onLine(partial.slice(0, newline), out);
        partial = partial.slice(newline + 1);
        newline = partial.indexOf("\n");
      }
      if (partial.length > LINE_LIMIT) {
        partial = "";
        out.error(new Error(`a line of the command's output stream passed ${LINE_LIMIT} characters`));
      }
    },
    flush(out) {
      onLine(partial + decoder.decode(), out);
      if (!ended) flushHeld(out);
    },
  });
}
