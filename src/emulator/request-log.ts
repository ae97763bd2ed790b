// The request log tests and benches count round trips with: method, path, status and time of every request that
// passed authorization (a refused request is never recorded, so no one without the token can grow it). It is a
// ring bounded both in entries and in bytes, and a path longer than REQUEST_LOG_PATH_CHARS is cut with a note of
// how much was cut, so a long-lived emulator (the gateway's, with backend "embedded") holds at most about
// REQUEST_LOG_BYTES for it whatever its clients send. Past either budget the oldest entries go: a caller that
// counts from an index (`requests().slice(n)`) sees every request while fewer than REQUEST_LOG_ENTRIES were made.

export interface RequestLogEntry {
  method: string;
  /** The pathname, without the query; cut to REQUEST_LOG_PATH_CHARS characters. */
  path: string;
  /** 0 when the connection was reset or dropped by a fault. */
  status: number;
  ms: number;
}

/** Entries kept, newest last. */
export const REQUEST_LOG_ENTRIES = 10_000;
/** Bytes the kept entries may take, counting each path's characters twice and ENTRY_OVERHEAD per entry. */
export const REQUEST_LOG_BYTES = 4 * 1024 * 1024;
/** A path longer than this is cut (the API's own paths are far shorter). */
export const REQUEST_LOG_PATH_CHARS = 512;
/** What an entry costs besides its strings: the object, its number fields, the ring's slot. */
const ENTRY_OVERHEAD = 96;

/** A flat copy: V8 keeps a slice of a long string as a view that holds the whole string alive. */
const copied = (s: string) => Buffer.from(s, "utf16le").toString("utf16le");

/** The path as the log keeps it: whole, or cut with the count of what was cut. */
export function loggedPath(path: string): string {
  if (path.length <= REQUEST_LOG_PATH_CHARS) return path;
  const kept = path.slice(0, REQUEST_LOG_PATH_CHARS - 32);
  return copied(`${kept}…[${path.length - kept.length} more characters]`);
}

const costOf = (entry: RequestLogEntry) => ENTRY_OVERHEAD + 2 * (entry.path.length + entry.method.length);

export class RequestLog {
  private entries: RequestLogEntry[] = [];
  /** Index of the oldest kept entry in `entries` (dropped ones before it are cleared out now and then). */
  private first = 0;
  private bytes = 0;

  constructor(
    private readonly maxEntries = REQUEST_LOG_ENTRIES,
    private readonly maxBytes = REQUEST_LOG_BYTES,
  ) {}

  /** Records a request (its path cut if long); the entry is returned for its status and time to be filled in. */
  add(method: string, path: string): RequestLogEntry {
    const entry: RequestLogEntry = { method: method.slice(0, 32), path: loggedPath(path), status: 0, ms: 0 };
    this.entries.push(entry);
    this.bytes += costOf(entry);
    while (this.entries.length - this.first > this.maxEntries || this.bytes > this.maxBytes) {
      this.bytes -= costOf(this.entries[this.first]!);
      this.first++;
    }
    // Dropped entries are cut away in one go once they are as many as the kept ones: amortized O(1) per request.
    if (this.first > 0 && this.first >= this.entries.length - this.first) {
      this.entries = this.entries.slice(this.first);
      this.first = 0;
    }
    return entry;
  }

  /** Copies of the kept entries, oldest first. */
  list(): RequestLogEntry[] {
    return this.entries.slice(this.first).map((e) => ({ ...e }));
  }

  get size(): number {
    return this.entries.length - this.first;
  }

  /** What the kept entries cost by the log's own count (at most `maxBytes`). */
  get cost(): number {
    return this.bytes;
  }
}
