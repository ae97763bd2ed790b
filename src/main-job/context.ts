// What one run of the main job shares between its phases: the caller's options, the progress log, the services on
// this machine, the secrets, VM1 and its host, and the counters and lists over the emulator. `run.ts` builds it
// once per run (`phase-setup.ts` the part before VM1, `phase-vm1.ts` VM1 and its host); every phase takes it as
// an argument. A leaf of the room: it imports only types (and node:crypto for `hex`).
import { randomBytes } from "node:crypto";
import type { Sandbox } from "@vercel/sandbox";
import type { RerunCache } from "./cache.js";
import type { Vm1OnDisk } from "./evidence.js";
import type { JobHost } from "./host.js";
import type { LiveLine } from "./live.js";
import type { Log, Progress } from "./report.js";
import type { ReuseRecord } from "./reuse.js";
import type { Services } from "./services.js";
import type { Teardown } from "./teardown.js";
import type { AgentMode, Timers } from "./topology.js";
import type { GatewaySecrets } from "./vm1.js";

export interface MainJobOptions {
  log?: Log;
  timers?: Timers;
  keep?: boolean;
  /**
   * Called once the third reply is in, before anything is deleted, with where VM1's disk and its checkpoints are on
   * this machine and every secret in play (a spec scans them; the job itself checks VM1's gateway tree).
   */
  inspect?: (vm1: Vm1OnDisk) => Promise<void>;
  /** Where message 1's current provision phase is shown live (default: a plain line per phase in the log). */
  live?: LiveLine;
  /**
   * The rerun cache (`npm start`): the emulator's store and VM1's image kept in `dir` between runs, reused when
   * their key matches; `fresh` discards it first. Default: none (every run starts from nothing, as the spec does).
   */
  reuse?: { dir: string; fresh: boolean };
  /** `codex`: Codex on VM1 runs its commands on VM2 by remote-exec (newest gateway with the Codex plugin). */
  mode?: AgentMode;
}

/** What the job knows before its services start: what `setUpJob` (phase-setup.ts) is given. */
export interface JobStart {
  options: MainJobOptions;
  /** Every line redacted (startMainJob). */
  log: Log;
  progress: Progress;
  teardown: Teardown;
  /** `performance.now()` when the job began (the summary's total). */
  started: number;
  timers: Timers;
  mode: AgentMode;
  /** The job's temp dir: the API front's keys, the packed plugin and the emulator's data dir. */
  tmp: string;
  /** The rerun cache (undefined: none in use). */
  cache: RerunCache | undefined;
}

/** The per-run values every phase of the main job reads. */
export interface JobContext extends JobStart {
  services: Services;
  secrets: GatewaySecrets;
  /** This checkout's plugin, packed. */
  plugin: { fileName: string; bytes: Buffer };
  /** What the next run finds in the cache (saved as its parts are made). */
  next: ReuseRecord;
  /** Sandboxes the API created so far. */
  creates(): number;
  sandboxes(): Promise<Array<{ name: string; status: string }>>;
  /** Every snapshot not deleted. */
  snapshots(): Promise<Array<{ id: string; status: string }>>;
  /** The snapshots that outlive the run (the rerun cache's). */
  cached(): Set<string>;
  /** Deletes every sandbox and every snapshot but the cached ones. */
  deleteAll(): Promise<void>;
  /** The cache now holds this run's whole record: what the last run kept is no longer kept for it. */
  lastRunKeptReplaced(): void;
  /** VM1, its host, and where VM1's gateway port is exposed. */
  box: Sandbox;
  host: JobHost;
  publicOrigin: string;
}

/** The context before VM1 exists. */
export type JobSetup = Omit<JobContext, "box" | "host" | "publicOrigin">;

export const hex = (bytes = 24) => randomBytes(bytes).toString("hex");
