// The one seam between the provider and Vercel. Every Vercel call goes through here: credentials, the
// `fetch` used by the SDK (the emulator or a custom API URL plugs in only through the SDK's documented
// `fetch` option), retries of calls that are safe to repeat, and error classification.
//
// Inspect and keepalive must never wake a sandbox, so the handles they get are bound to a fetch that refuses
// the SDK's auto-resume (see fetch.ts). The embedded backend is not started here: whoever hosts the provider
// (the plugin entry) starts it and hands it over as an `embeddedBackend` factory, so this room never loads
// the emulator.
import * as defaultSdk from "@vercel/sandbox";
import pRetry from "p-retry";
import { registerSecret } from "../infra/index.js";
import type { ProfileSettings } from "../settings/index.js";
import { boundingCommandOutput, limitOutput, outputTally } from "./command-output.js";
import { type Credentials, defaultSecretResolver, resolveCredentials, type SecretResolver } from "./credentials.js";
import { classify, isFailure } from "./errors.js";
import { refusingResume, rewritingFetch } from "./fetch.js";

type Fetch = typeof globalThis.fetch;
export type SandboxSdk = Pick<typeof defaultSdk, "Sandbox" | "Snapshot">;
export type SandboxHandle = defaultSdk.Sandbox;
type CreateParams = Parameters<typeof defaultSdk.Sandbox.create>[0];

/** A Vercel Sandbox API the host runs for `backend: "embedded"` profiles, e.g. the emulator. */
export interface EmbeddedBackend {
  credentials: Credentials;
  fetch: Fetch;
}

export interface VercelClientOptions {
  /** The `@vercel/sandbox` module to use (tests run 3.2.1 and the latest 3.x). */
  sdk?: SandboxSdk;
  /** Passed to the SDK as its documented `fetch` option, e.g. an emulator's `api.fetch`. */
  fetch?: Fetch;
  /** Explicit credentials; otherwise they are resolved from the profile's references at call time. */
  credentials?: Credentials;
  env?: NodeJS.ProcessEnv;
  resolveSecret?: SecretResolver;
  /**
   * Serves `backend: "embedded"` profiles; called on every use, so it should start its backend once and
   * return the same one. The caller owns stopping it. Without it, embedded profiles are refused.
   */
  embeddedBackend?: () => Promise<EmbeddedBackend>;
}

/** One command on a sandbox, as enrollment runs it; `env` is the only place a secret may travel. */
export interface BoxCommand {
  cmd: string;
  args?: string[];
  env?: Record<string, string>;
  /** Working directory on the sandbox; the sandbox's default when absent. */
  cwd?: string;
  sudo?: boolean;
  timeoutMs?: number;
  signal?: AbortSignal;
  /**
   * How much of each stream the gateway keeps, since the box is untrusted and may print without end: its
   * last `bytes` ("tail"), or all of it up to `bytes` ("whole", for our own programs' JSON lines; more is a
   * BoxOutputTooLargeError). Default: whole, WHOLE_OUTPUT_BYTES.
   */
  output?: { keep: "tail" | "whole"; bytes: number };
}

export interface BoxCommandResult {
  exitCode: number;
  stdout: string;
  stderr: string;
  /** Bytes dropped from the start of each stream to keep its tail (always 0 when keeping whole). */
  dropped: { stdout: number; stderr: number };
}

/** Our own programs print a few JSON lines; a box printing more than this is not running them faithfully. */
export const WHOLE_OUTPUT_BYTES = 1024 * 1024;

/** A command printed more than the caller's bound for output it needs whole; the command was killed. */
export class BoxOutputTooLargeError extends Error {
  override readonly name = "BoxOutputTooLargeError";
  constructor(
    readonly cmd: string,
    readonly stream: "stdout" | "stderr",
    readonly limitBytes: number,
  ) {
    super(
      `vercel-sandbox: \`${cmd}\` printed more than ${limitBytes} bytes on ${stream}, past what its caller reads; the sandbox is not behaving as the program it was given`,
    );
  }
}

/**
 * One stream of a command, held in bounded memory: chunks of UTF-8 bytes, the oldest dropped once the rest
 * already holds the limit ("tail"), or an overflow flagged ("whole").
 */
class BoundedStream {
  private chunks: Buffer[] = [];
  private held = 0;
  dropped = 0;
  overflowed = false;
  constructor(private readonly limit: { keep: "tail" | "whole"; bytes: number }) {}

  add(data: string): void {
    const chunk = Buffer.from(data, "utf8");
    if (this.limit.keep === "whole" && this.held + chunk.length > this.limit.bytes) {
      this.overflowed = true;
      return;
    }
    this.chunks.push(chunk);
    this.held += chunk.length;
    while (this.chunks.length > 1 && this.held - this.chunks[0]!.length >= this.limit.bytes) {
      const old = this.chunks.shift()!;
      this.held -= old.length;
      this.dropped += old.length;
    }
  }

  text(): string {
    const all = Buffer.concat(this.chunks);
    let start = Math.max(0, all.length - this.limit.bytes);
    // Past UTF-8 continuation bytes (10xxxxxx), so the tail starts on a whole character.
    while (start < all.length && (all[start]! & 0xc0) === 0x80) start += 1;
    this.dropped += start;
    return all.subarray(start).toString("utf8");
  }
}

/**
 * The narrow part of a sandbox that node enrollment needs: write files, run a command to completion. It is
 * all enrollment code sees of Vercel, so retries, classification and redaction stay in this seam.
 */
export interface SandboxBox {
  readonly name: string;
  writeFiles(
    files: Array<{ path: string; content: string | Uint8Array; mode?: number }>,
    signal?: AbortSignal,
  ): Promise<void>;
  run(command: BoxCommand): Promise<BoxCommandResult>;
}

/** What preparation and retention need to know of a snapshot. */
export interface SnapshotFacts {
  id: string;
  status: string;
  sizeBytes: number;
  createdAt: number;
  expiresAt?: number;
}

export interface SandboxSummary {
  name: string;
  status: string;
  tags: Record<string, string>;
}

/** How many sessions a restore starts before it gives up on one that stands on its snapshot. */
const RESTORE_ATTEMPTS = 3;

/** The sandbox kept answering with a session that does not stand on the snapshot a restore asked for. */
export class RestoreMismatchError extends Error {
  override readonly name = "RestoreMismatchError";
  constructor(sandbox: string, snapshotId: string, got: string | undefined) {
    super(
      `sandbox ${sandbox} did not restore snapshot ${snapshotId}: after ${RESTORE_ATTEMPTS} sessions it still boots from ${got ?? "its base image"}`,
    );
  }
}

/** A profile asked for something this provider instance was not given. */
export class BackendUnavailableError extends Error {
  override readonly name = "BackendUnavailableError";
}
/** Vercel answering "no such thing" is a result here, not a failure. */
async function unlessAbsent<T>(work: Promise<T>): Promise<T | undefined> {
  try {
    return await work;
  } catch (error) {
    if (isFailure(error, "not_found")) return undefined;
    throw error;
  }
}

/** Retries only failures that are transient, for operations that are safe to repeat. */
function retrying<T>(operation: string, signal: AbortSignal | undefined, run: () => Promise<T>): Promise<T> {
  return pRetry(
    async () => {
      try {
        return await run();
      } catch (error) {
        throw classify(error, operation);
      }
    },
    {
      retries: 2,
      minTimeout: 300,
      factor: 2,
      signal,
      shouldRetry: ({ error }) => isFailure(error, "transient"),
    },
  );
}

export class VercelClient {
  private readonly sdk: SandboxSdk;
  private readonly env: NodeJS.ProcessEnv;
  private readonly resolveSecret: SecretResolver;

  constructor(private readonly options: VercelClientOptions = {}) {
    this.sdk = options.sdk ?? defaultSdk;
    this.env = options.env ?? process.env;
    this.resolveSecret = options.resolveSecret ?? defaultSecretResolver(this.env);
    registerSecret(options.credentials?.token);
  }

  /** Resolves credentials and transport for one profile. Reads the environment; makes no Vercel request. */
  async project(settings: ProfileSettings): Promise<VercelProject> {
    if (settings.backend === "embedded") {
      if (!this.options.embeddedBackend) {
        throw new BackendUnavailableError(
          'backend: "embedded" needs the plugin entry (or an embeddedBackend option); this provider has none',
        );
      }
      const backend = await this.options.embeddedBackend();
      registerSecret(backend.credentials.token);
      return new VercelProject(this.sdk, backend.credentials, backend.fetch);
    }
    const credentials =
      this.options.credentials ?? (await resolveCredentials(settings.credentials, this.env, this.resolveSecret));
    const base = this.options.fetch ?? globalThis.fetch;
    const fetch = settings.apiUrl && !this.options.fetch ? rewritingFetch(settings.apiUrl, base) : base;
    return new VercelProject(this.sdk, credentials, fetch);
  }
}

export class VercelProject {
  private readonly fetch: Fetch;

  constructor(
    private readonly sdk: SandboxSdk,
    private readonly credentials: Credentials | undefined,
    fetch: Fetch,
  ) {
    // Every handle reads a command's output in bounded memory (command-output.ts).
    this.fetch = boundingCommandOutput(fetch);
  }

  private params<T extends object>(extra: T, fetch: Fetch = this.fetch) {
    return { ...(this.credentials ?? {}), fetch, ...extra };
  }

  /** Creates a named sandbox; the SDK itself retries 5xx and network failures of this POST. */
  async create(params: NonNullable<CreateParams>, signal?: AbortSignal): Promise<SandboxHandle> {
    try {
      return await this.sdk.Sandbox.create(this.params({ ...params, signal }) as CreateParams);
    } catch (error) {
      throw classify(error, "create sandbox");
    }
  }

  /** One lookup by name that never boots a session; `undefined` when Vercel says the name does not exist. */
  async find(name: string, signal?: AbortSignal): Promise<SandboxHandle | undefined> {
    return unlessAbsent(
      retrying("get sandbox", signal, () =>
        this.sdk.Sandbox.get(this.params({ name, signal }, refusingResume(this.fetch))),
      ),
    );
  }

  /** Returns the sandbox with a running session, booting one if it is stopped. */
  async resume(name: string, signal?: AbortSignal): Promise<SandboxHandle> {
    return retrying("resume sandbox", signal, () => this.sdk.Sandbox.get(this.params({ name, resume: true, signal })));
  }

  async list(tag: Record<string, string>, signal?: AbortSignal): Promise<SandboxSummary[]> {
    return retrying("list sandboxes", signal, async () => {
      const out: SandboxSummary[] = [];
      const paginator = await this.sdk.Sandbox.list(this.params({ tags: tag, limit: 100, signal }));
      for await (const sandbox of paginator) {
        out.push({ name: sandbox.name, status: sandbox.status, tags: sandbox.tags ?? {} });
      }
      return out;
    });
  }

  async snapshotIdsOf(name: string, signal?: AbortSignal): Promise<string[]> {
    return retrying("list snapshots", signal, async () => {
      const ids: string[] = [];
      const paginator = await this.sdk.Snapshot.list(this.params({ name, limit: 100, signal }));
      for await (const snapshot of paginator) {
        if (snapshot.status !== "deleted") ids.push(snapshot.id);
      }
      return ids;
    });
  }

  async deleteSnapshot(snapshotId: string, signal?: AbortSignal): Promise<void> {
    await unlessAbsent(
      retrying("delete snapshot", signal, async () => {
        const snapshot = await this.sdk.Snapshot.get(this.params({ snapshotId, signal }));
        await snapshot.delete({ signal });
      }),
    );
  }

  /** One snapshot by id; `undefined` when Vercel says it does not exist or it is deleted. */
  async findSnapshot(snapshotId: string, signal?: AbortSignal): Promise<SnapshotFacts | undefined> {
    const snapshot = await unlessAbsent(
      retrying("get snapshot", signal, () => this.sdk.Snapshot.get(this.params({ snapshotId, signal }))),
    );
    if (!snapshot || snapshot.status === "deleted") return undefined;
    return {
      id: snapshot.snapshotId,
      status: snapshot.status,
      sizeBytes: snapshot.sizeBytes,
      createdAt: snapshot.createdAt.getTime(),
      expiresAt: snapshot.expiresAt?.getTime(),
    };
  }

  /**
   * Snapshots a running sandbox (Vercel stops it to do so). Never retried: a lost answer may hide a snapshot,
   * which the caller finds again by listing the sandbox's snapshots.
   */
  async capture(sandbox: SandboxHandle, expirationMs: number, signal?: AbortSignal): Promise<string> {
    try {
      const snapshot = await sandbox.snapshot({ expiration: expirationMs, signal });
      return snapshot.snapshotId;
    } catch (error) {
      throw classify(error, "snapshot sandbox");
    }
  }

  /**
   * Makes the sandbox's next session restore `snapshotId`, then starts that session. Anything that ran a command
   * on the stopped sandbox between the capture and the update (the SDK resumes on every command) booted a
   * session that does not stand on the snapshot (a non-persistent sandbox boots its bare image): that session is
   * stopped and the restore's own started in its place.
   */
  async restore(sandbox: SandboxHandle, snapshotId: string, signal?: AbortSignal): Promise<SandboxHandle> {
    await retrying("update sandbox", signal, () => sandbox.update({ currentSnapshotId: snapshotId }, { signal }));
    for (let attempt = 1; ; attempt++) {
      const resumed = await this.resume(sandbox.name, signal);
      if (resumed.sourceSnapshotId === snapshotId) return resumed;
      if (attempt === RESTORE_ATTEMPTS) {
        throw new RestoreMismatchError(sandbox.name, snapshotId, resumed.sourceSnapshotId);
      }
      await retrying("stop sandbox", signal, () => resumed.stop({ signal }));
    }
  }

  /** Deletes a sandbox (its running session ends with it); a missing sandbox counts as deleted. */
  async delete(sandbox: SandboxHandle, deleteOrphanSnapshots: boolean, signal?: AbortSignal): Promise<void> {
    await unlessAbsent(retrying("delete sandbox", signal, () => sandbox.delete({ deleteOrphanSnapshots, signal })));
  }

  /** Extends a running session on a handle from `find` (so a stopped session fails instead of waking). */
  async extendTimeout(sandbox: SandboxHandle, ms: number, signal?: AbortSignal): Promise<void> {
    try {
      await sandbox.extendTimeout(ms, { signal });
    } catch (error) {
      throw classify(error, "extend timeout");
    }
  }

  /** The enrollment view of a running sandbox (see SandboxBox). */
  box(sandbox: SandboxHandle): SandboxBox {
    return {
      name: sandbox.name,
      // Writing the same files again is harmless, so transient failures are retried.
      writeFiles: (files, signal) => retrying("write files", signal, () => sandbox.writeFiles(files, { signal })),
      // Never retried: a command may have run even when its answer was lost.
      run: async ({ cmd, args = [], env = {}, cwd, sudo = false, timeoutMs, signal, output }) => {
        const limit = output ?? { keep: "whole", bytes: WHOLE_OUTPUT_BYTES };
        const tally = outputTally(limit);
        try {
          // One request: the waiting form, its output bounded as it arrives (command-output.ts).
          const finished = await limitOutput(tally, () =>
            sandbox.runCommand({ cmd, args, env, sudo, timeoutMs, signal, ...(cwd ? { cwd } : {}) }),
          );
          const streams = { stdout: new BoundedStream(limit), stderr: new BoundedStream(limit) };
          streams.stdout.add(await finished.stdout());
          streams.stderr.add(await finished.stderr());
          const stdout = streams.stdout.text();
          const stderr = streams.stderr.text();
          const dropped = {
            stdout: tally.dropped.stdout + streams.stdout.dropped,
            stderr: tally.dropped.stderr + streams.stderr.dropped,
          };
          return { exitCode: finished.exitCode, stdout, stderr, dropped };
        } catch (error) {
          if (tally.overflowed) {
            // Kept whole and past its limit: the command is stopped, not left printing.
            if (tally.cmdId)
              await sandbox
                .getCommand(tally.cmdId)
                .then((c) => c.kill("SIGKILL"))
                .catch(() => undefined);
            throw new BoxOutputTooLargeError(cmd, tally.overflowed, limit.bytes);
          }
          throw classify(error, `run ${cmd}`);
        }
      },
    };
  }

  async updateNetworkPolicy(
    sandbox: SandboxHandle,
    policy: Parameters<SandboxHandle["updateNetworkPolicy"]>[0],
    signal?: AbortSignal,
  ): Promise<void> {
    try {
      await sandbox.updateNetworkPolicy(policy, { signal });
    } catch (error) {
      throw classify(error, "update network policy");
    }
  }
}
