// One crash-safe JSON file of the provider's own state (external plugins get no host state store): the lease
// ledger and the warm-image store both live in one. The file must never stand between core and its work, so:
// - a damaged file is reported, moved aside (`<file>.corrupt-<ms>`) for the operator, and read as empty;
// - a failed write is logged and does not poison later writes (the owner keeps its records in memory and
//   writes them with its next change);
// - writes are durable: temp file, fsync, rename, fsync of the directory; private (0600);
// - every read and write of one path in this process runs on one queue, and a write is built from what is
//   on disk at that moment, so owners can merge in what other instances wrote before replacing the file;
// - it remembers the file as this instance last read or wrote it, so an owner re-reads only what another
//   instance (a second gateway process, a CLI) changed since.
import * as nodeFs from "node:fs/promises";
import { dirname } from "node:path";
import { messageOf } from "./redact.js";

/** The file operations used; tests wrap the real ones to observe order or fail one. */
export type DurableFs = Pick<typeof nodeFs, "mkdir" | "open" | "readFile" | "rename" | "unlink">;

export interface DurableLogger {
  warn(message: string): void;
}

export interface DurableFileOptions {
  logger?: DurableLogger;
  fs?: DurableFs;
}

/** Thrown by a format's `parse` when the text is not that file's format; the message says what is wrong. */
export class DamagedFileError extends Error {
  override readonly name = "DamagedFileError";
}

export interface DurableFormat<T> {
  /** What the file is, for warnings, e.g. "lease ledger". */
  label: string;
  /** What its owner keeps in memory while the file cannot be written, e.g. "tombstones". */
  contents: string;
  empty(): T;
  /** Reads the text, dropping malformed records; throws DamagedFileError when the whole file is unusable. */
  parse(text: string): T;
}

/** Reads and writes of one path from any number of owners in this process run one at a time. */
const fileQueues = new Map<string, Promise<unknown>>();

function queued<T>(file: string, task: () => Promise<T>): Promise<T> {
  const run = (fileQueues.get(file) ?? Promise.resolve()).then(task, task);
  const tail = run.catch(() => undefined);
  fileQueues.set(file, tail);
  void tail.then(() => {
    if (fileQueues.get(file) === tail) fileQueues.delete(file);
  });
  return run;
}

const signatureOf = (stat: { ino: number; size: number; mtimeMs: number }) =>
  `${stat.ino}:${stat.size}:${stat.mtimeMs}`;

export class DurableFile<T> {
  private readonly fs: DurableFs;
  private readonly logger: DurableLogger;
  /** The file's identity, size and time when this instance last read or wrote it. */
  private seen: string | undefined;

  constructor(
    readonly path: string,
    private readonly format: DurableFormat<T>,
    options: DurableFileOptions = {},
  ) {
    this.fs = options.fs ?? nodeFs;
    this.logger = options.logger ?? { warn: (message) => console.warn(message) };
  }

  /** Changes whenever the file is replaced or rewritten; "absent" when there is none (or it cannot be seen). */
  private async signature(): Promise<string> {
    try {
      return signatureOf(await nodeFs.stat(this.path));
    } catch {
      return "absent";
    }
  }

  /**
   * What is on disk, or undefined when the file is as this instance last read or wrote it; never rejects (a
   * damaged file is quarantined and read as empty).
   */
  readIfChanged(): Promise<T | undefined> {
    return queued(this.path, async () => {
      const signature = await this.signature();
      if (signature === this.seen) return undefined;
      const onDisk = await this.readOrQuarantine();
      this.seen = signature;
      return onDisk;
    });
  }

  /**
   * Under the file's queue, hands `build` what is on disk and writes the text it returns. When `build`
   * throws nothing is written and the error is the caller's; a failed write is logged and resolves `false`.
   * `build` merges what is on disk into its owner's memory and writes that, so the file written counts as read.
   */
  async update(build: (onDisk: T) => string): Promise<boolean> {
    let body: string | undefined;
    try {
      await queued(this.path, async () => {
        body = build(await this.readOrQuarantine());
        await this.writeDurably(body);
      });
      return true;
    } catch (error) {
      if (body === undefined) throw error;
      this.logger.warn(
        `vercel-sandbox could not write the ${this.format.label} ${this.path} (${messageOf(error)}); ` +
          `its ${this.format.contents} are kept in memory and written with the next change`,
      );
      return false;
    }
  }

  private async readOrQuarantine(): Promise<T> {
    const file = this.path;
    let reason: string;
    try {
      return this.format.parse(await this.fs.readFile(file, "utf8"));
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === "ENOENT") return this.format.empty();
      reason = error instanceof DamagedFileError ? error.message : `it cannot be read (${messageOf(error)})`;
    }
    const aside = `${file}.corrupt-${Date.now()}`;
    const { label, contents } = this.format;
    try {
      await this.fs.rename(file, aside);
      this.logger.warn(
        `vercel-sandbox ${label} ${file} is damaged (${reason}); moved it to ${aside} and started a new one`,
      );
    } catch (error) {
      this.logger.warn(
        `vercel-sandbox ${label} ${file} is damaged (${reason}) and could not be moved aside ` +
          `(${messageOf(error)}); ${contents} are kept in memory until it can be replaced`,
      );
    }
    return this.format.empty();
  }

  private async writeDurably(body: string): Promise<void> {
    const file = this.path;
    const dir = dirname(file);
    await this.fs.mkdir(dir, { recursive: true, mode: 0o700 });
    const temp = `${file}.${process.pid}.${Math.random().toString(36).slice(2)}.tmp`;
    const handle = await this.fs.open(temp, "w", 0o600);
    let written: string;
    try {
      try {
        await handle.writeFile(body);
        await handle.sync();
        // The rename keeps inode, size and time: this is the signature the file has once in place.
        written = signatureOf(await handle.stat());
      } finally {
        await handle.close();
      }
      await this.fs.rename(temp, file);
    } catch (error) {
      await this.fs.unlink(temp).catch(() => undefined);
      throw error;
    }
    this.seen = written;
    // The rename itself is durable only once the directory entry is.
    const dirHandle = await this.fs.open(dir, "r");
    try {
      await dirHandle.sync();
    } finally {
      await dirHandle.close();
    }
  }
}
