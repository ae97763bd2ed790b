// Scheduled wake on the host: keep the latest verified wake snapshot and say when VM1 must next be awake. A
// snapshot is accepted only when its revision is higher than the one kept (a stale or replayed one never
// replaces it) and only once it is durable (the store's replace resolves after that), so the host acknowledges
// only what it will still know after a crash. `plan` turns the soonest job into a wake time, or a report of why
// this host cannot schedule it (too far ahead for its scheduler, or past the session deadline): never dropped.
import path from "node:path";
import { Value } from "@sinclair/typebox/value";
import { DamagedFileError, DurableFile } from "../infra/index.js";
import { type WakeNotification, type WakeSnapshot, WakeSnapshotSchema } from "../protocol/index.js";

export interface KeptWake {
  instanceId: string;
  leadMs: number;
  snapshot: WakeSnapshot;
  acceptedAtMs: number;
}

/** Where the latest snapshot is kept. `replace` is atomic and resolves only once `next` is durable. */
export interface WakeStore {
  read(): Promise<KeptWake | undefined>;
  /** Replaces the kept snapshot with `next` unless one of an equal or higher revision is kept: "stale" then. */
  replace(next: KeptWake): Promise<"accepted" | "stale">;
}

export class MemoryWakeStore implements WakeStore {
  #kept: KeptWake | undefined;
  async read() {
    return this.#kept;
  }
  async replace(next: KeptWake) {
    if (this.#kept && this.#kept.snapshot.revision >= next.snapshot.revision) return "stale" as const;
    this.#kept = next;
    return "accepted" as const;
  }
}

/** The kept snapshot could not be made durable: do not acknowledge (the plugin retries). */
export class WakeStoreWriteError extends Error {
  override readonly name = "WakeStoreWriteError";
}

class Stale extends Error {}

/** A kept snapshot from its JSON text (`null`: none); DamagedFileError when it is not one. */
export function parseKept(text: string): KeptWake | undefined {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw new DamagedFileError("it is not valid JSON");
  }
  if (parsed === null) return undefined;
  const kept = parsed as Partial<KeptWake> | null;
  if (
    typeof kept?.instanceId !== "string" ||
    typeof kept.leadMs !== "number" ||
    typeof kept.acceptedAtMs !== "number" ||
    !Value.Check(WakeSnapshotSchema, kept.snapshot)
  ) {
    throw new DamagedFileError("it is not a wake snapshot");
  }
  return kept as KeptWake;
}

/** A wake store in one file (written to a temporary file, synced, renamed: an atomic replace). */
export class FileWakeStore implements WakeStore {
  readonly #file: DurableFile<KeptWake | undefined>;

  constructor(dir: string, logger?: { warn(message: string): void }) {
    this.#file = new DurableFile(
      path.join(dir, "wake-snapshot.json"),
      { label: "wake snapshot", contents: "the latest wake snapshot", empty: () => undefined, parse: parseKept },
      logger ? { logger } : {},
    );
  }

  async read(): Promise<KeptWake | undefined> {
    let kept: KeptWake | undefined;
    await this.#file
      .update((onDisk) => {
        kept = onDisk;
        throw new Stale();
      })
      .catch((error: unknown) => {
        if (!(error instanceof Stale)) throw error;
      });
    return kept;
  }

  async replace(next: KeptWake): Promise<"accepted" | "stale"> {
    let written: boolean;
    try {
      written = await this.#file.update((onDisk) => {
        if (onDisk && onDisk.snapshot.revision >= next.snapshot.revision) throw new Stale();
        return `${JSON.stringify(next)}\n`;
      });
    } catch (error) {
      if (error instanceof Stale) return "stale";
      throw error;
    }
    if (!written) throw new WakeStoreWriteError("the wake snapshot could not be written durably");
    return "accepted";
  }
}

export type WakePlan =
  | { kind: "none" }
  /** Wake VM1 at `atMs` (the job's due time minus the gateway's lead and the host's own, never before now). */
  | { kind: "wake"; atMs: number; jobId: string; runAtMs: number }
  /** This host cannot schedule it; report it (the job would be missed otherwise). */
  | { kind: "unschedulable"; jobId: string; runAtMs: number; reason: "too-far" | "after-deadline" };

export interface WakeLimits {
  /** The furthest ahead this host's scheduler can set a timer. */
  maxAheadMs?: number;
  /** VM1's session deadline (epoch ms): a wake after it cannot happen in this session. */
  deadlineAtMs?: number;
  /** The host's own lead: how long its wake of VM1 takes, so it starts that much before the gateway's lead. */
  aheadMs?: number;
  /**
   * Wakes (wakeKey) this host already woke VM1 for. One whose due time has passed is not woken for again: the
   * gateway had its run (a job it still owes it lists anew), and a job the gateway never runs must not wake VM1
   * after every sleep. One still ahead is kept, so a VM1 that slept before it is woken again.
   */
  served?: ReadonlySet<string>;
}

/** Identifies one due run of one job (a served wake is remembered by it). */
export const wakeKey = (wake: { jobId: string; runAtMs: number }) => `${wake.jobId}@${wake.runAtMs}`;

export class WakeSchedule {
  constructor(private readonly store: WakeStore = new MemoryWakeStore()) {}

  /** Keeps a verified notification's snapshot if it is newer than the one kept; resolves once durable. */
  async accept(notification: WakeNotification, nowMs = Date.now()): Promise<"accepted" | "stale"> {
    return this.store.replace({
      instanceId: notification.instanceId,
      leadMs: notification.leadMs,
      snapshot: notification.snapshot,
      acceptedAtMs: nowMs,
    });
  }

  /** Keeps a snapshot read from GET status (a host that missed a notification recovers it here). */
  async recover(instanceId: string, snapshot: WakeSnapshot, leadMs: number, nowMs = Date.now()) {
    return this.store.replace({ instanceId, leadMs, snapshot, acceptedAtMs: nowMs });
  }

  async latest(): Promise<KeptWake | undefined> {
    return this.store.read();
  }

  /** When VM1 must next be awake: the soonest job's due time minus the lead; undefined when nothing is scheduled. */
  async nextWakeAt(): Promise<number | undefined> {
    const kept = await this.store.read();
    const first = kept?.snapshot.wakes[0];
    return first === undefined || !kept ? undefined : first.runAtMs - kept.leadMs;
  }

  /** The next wake as this host can act on it (pure over the kept snapshot, `nowMs` and the host's limits). */
  async plan(nowMs: number, limits: WakeLimits = {}): Promise<WakePlan> {
    const kept = await this.store.read();
    return planWake(kept, nowMs, limits);
  }
}

export function planWake(kept: KeptWake | undefined, nowMs: number, limits: WakeLimits = {}): WakePlan {
  const first = kept?.snapshot.wakes.find((w) => !(w.runAtMs <= nowMs && limits.served?.has(wakeKey(w))));
  if (!kept || !first) return { kind: "none" };
  const atMs = Math.max(nowMs, first.runAtMs - kept.leadMs - (limits.aheadMs ?? 0));
  const job = { jobId: first.jobId, runAtMs: first.runAtMs };
  if (limits.deadlineAtMs !== undefined && first.runAtMs >= limits.deadlineAtMs) {
    return { kind: "unschedulable", ...job, reason: "after-deadline" };
  }
  if (limits.maxAheadMs !== undefined && atMs - nowMs > limits.maxAheadMs) {
    return { kind: "unschedulable", ...job, reason: "too-far" };
  }
  return { kind: "wake", atMs, ...job };
}
