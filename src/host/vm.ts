// Sleeping and waking VM1 (the sandbox that runs the gateway) with the Vercel Sandbox SDK. Sleep: snapshot the
// sandbox (which stops it), then delete checkpoints older than the newest `keep` and prove each is gone. Wake:
// the next command resumes the sandbox from its newest checkpoint (disk restored, no process survives), so the
// gateway is started fresh, with a fresh idle clock; then wait until the caller's readiness probe says so.

import { setTimeout as sleep } from "node:timers/promises";
import { type NetworkPolicy, Sandbox, Snapshot } from "@vercel/sandbox";
import { checkKeep, checkpointsToDelete } from "./checkpoints.js";

/** What the SDK needs to reach the API: credentials, and optionally its documented `fetch` (e.g. the emulator's). */
export interface VmConnection {
  token: string;
  teamId: string;
  projectId: string;
  fetch?: typeof globalThis.fetch;
}

export interface SleepResult {
  snapshotId: string;
  kept: string[];
  deleted: string[];
}

/** A checkpoint that should have been deleted still exists; says which, so the host can retry. */
export class CheckpointCleanupError extends Error {
  constructor(readonly snapshotIds: string[]) {
    super(`checkpoints still present after delete: ${snapshotIds.join(", ")}; retry the sleep's cleanup`);
    this.name = "CheckpointCleanupError";
  }
}

/** The sandbox's snapshots (its checkpoints), oldest first as the API lists them. */
export async function listCheckpoints(connection: VmConnection, name: string) {
  const listed = await (await Snapshot.list({ ...connection, name } as Parameters<typeof Snapshot.list>[0])).toArray();
  return listed.map((s) => ({ id: s.id, status: s.status, createdAt: s.createdAt }));
}

/** VM1's status as the API reports it: "running" means awake; anything else needs a wake before use. */
export async function vmStatus(connection: VmConnection, name: string): Promise<string> {
  return (await Sandbox.get({ ...connection, name })).status;
}

/**
 * Snapshots (stops) VM1 and keeps only its newest `keep` checkpoints (default 2). A `keep` below 1 is refused
 * with a RangeError before VM1 is touched: the newest checkpoint is what a wake resumes from.
 */
export async function sleepVm(options: {
  connection: VmConnection;
  name: string;
  keep?: number;
  signal?: AbortSignal;
}): Promise<SleepResult> {
  const { connection, name } = options;
  const keep = options.keep ?? 2;
  checkKeep(keep);
  const sandbox = await Sandbox.get({ ...connection, name });
  const snapshot = await sandbox.snapshot({ expiration: 0, ...(options.signal ? { signal: options.signal } : {}) });
  const before = await listCheckpoints(connection, name);
  const doomed = checkpointsToDelete(before, keep);
  for (const snapshotId of doomed) {
    await (await Snapshot.get({ ...connection, snapshotId })).delete();
  }
  const after = await listCheckpoints(connection, name);
  const lingering = after.filter((c) => doomed.includes(c.id) && c.status !== "deleted").map((c) => c.id);
  if (lingering.length > 0) throw new CheckpointCleanupError(lingering);
  const kept = after
    .filter((c) => c.status === "created")
    .sort((a, b) => b.createdAt - a.createdAt)
    .map((c) => c.id);
  return { snapshotId: snapshot.snapshotId, kept, deleted: doomed };
}

export interface WakeOptions {
  connection: VmConnection;
  name: string;
  /** The gateway's start command, run detached in the restored sandbox. */
  start: { cmd: string; args?: string[]; env?: Record<string, string>; cwd?: string };
  /** Polled until true, e.g. GET /readyz on the gateway's port. */
  ready: (sandbox: Sandbox) => Promise<boolean>;
  /**
   * Set on the resumed session before the gateway starts. Credentials VM1 must not hold (the model's API key)
   * go here as a firewall rule, e.g. `{ allow: { "<model host>": [{ transform: [{ headers: { authorization:
   * "Bearer …" } }] }] } }`: the firewall adds them on the way out, so they are on no disk, environment or
   * checkpoint of VM1.
   */
  networkPolicy?: NetworkPolicy;
  timeoutMs?: number;
  pollMs?: number;
}

/** Resumes VM1 from its newest checkpoint, starts the gateway fresh and waits until `ready`. */
export async function wakeVm(options: WakeOptions): Promise<{ sandbox: Sandbox; ms: number }> {
  const started = performance.now();
  const sandbox = await Sandbox.get({ ...options.connection, name: options.name });
  if (options.networkPolicy) await sandbox.updateNetworkPolicy(options.networkPolicy);
  await sandbox.runCommand({
    cmd: options.start.cmd,
    args: options.start.args ?? [],
    ...(options.start.env ? { env: options.start.env } : {}),
    ...(options.start.cwd ? { cwd: options.start.cwd } : {}),
    detached: true,
  });
  const deadline = started + (options.timeoutMs ?? 120_000);
  for (;;) {
    if (await options.ready(sandbox).catch(() => false))
      return { sandbox, ms: Math.round(performance.now() - started) };
    if (performance.now() > deadline)
      throw new Error(`VM ${options.name} not ready ${options.timeoutMs ?? 120_000} ms after wake`);
    await sleep(options.pollMs ?? 500);
  }
}
