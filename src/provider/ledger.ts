// The provider's own durable memory (external plugins get no host state store): which leases core has
// destroyed. A tombstone is the proof `maintain` needs before it may delete a sandbox that carries our
// tags, and it stops a late provision replay from resurrecting a destroyed lease.
//
// The file must never stand between core and a teardown: it is a DurableFile (quarantined when damaged, a
// failed write logged and repaired by the next one, durable and private), and a write merges with what is on
// disk (union), so two provider instances on one file keep each other's tombstones.
import { join } from "node:path";
import { DamagedFileError, DurableFile, type DurableFs, type DurableLogger } from "./durable-file.js";

export interface Tombstone {
  sandboxName: string;
  destroyedAt: number;
  /** Set once a later lookup proved the sandbox absent. */
  provenAbsentAt?: number;
}

type Tombstones = Record<string, Tombstone>;

interface LedgerFile {
  version: 1;
  tombstones: Tombstones;
}

/** The file operations the ledger uses; tests wrap the real ones to observe order or fail one. */
export type LedgerFs = DurableFs;
export type LedgerLogger = DurableLogger;

export interface LedgerOptions {
  logger?: LedgerLogger;
  fs?: LedgerFs;
}

const MAX_TOMBSTONES = 4096;

function parseLedger(text: string): Tombstones {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw new DamagedFileError("it is not valid JSON");
  }
  const file = parsed as Partial<LedgerFile> | null;
  if (file?.version !== 1 || typeof file.tombstones !== "object" || file.tombstones === null) {
    throw new DamagedFileError("it is not a version 1 lease ledger");
  }
  const out: Tombstones = {};
  for (const [leaseId, t] of Object.entries(file.tombstones)) {
    if (t && typeof t.sandboxName === "string" && typeof t.destroyedAt === "number") out[leaseId] = t;
  }
  return out;
}

/** Union of two views of the ledger: every tombstone of either, absence proven if either proved it. */
function merge(into: Tombstones, from: Tombstones): void {
  for (const [leaseId, theirs] of Object.entries(from)) {
    const ours = into[leaseId];
    if (!ours) into[leaseId] = { ...theirs };
    else if (ours.provenAbsentAt === undefined && theirs.provenAbsentAt !== undefined) {
      ours.provenAbsentAt = theirs.provenAbsentAt;
    }
  }
}

const LEDGER_FORMAT = {
  label: "lease ledger",
  contents: "tombstones",
  empty: (): Tombstones => ({}),
  parse: parseLedger,
};

export class LeaseLedger {
  private tombstones: Tombstones = {};
  private loaded: Promise<void> | undefined;
  /** The file's identity, size and time when it was last merged into memory. */
  private seen: string | undefined;
  private readonly durable: DurableFile<Tombstones> | undefined;

  /** Without a file the ledger lives in memory (tests, or a host that gives the plugin no state dir). */
  constructor(file?: string, options: LedgerOptions = {}) {
    this.durable = file ? new DurableFile(file, LEDGER_FORMAT, options) : undefined;
  }

  static inDirectory(stateDir: string | undefined, options: LedgerOptions = {}): LeaseLedger {
    return new LeaseLedger(stateDir ? join(stateDir, "vercel-sandbox", "leases.json") : undefined, options);
  }

  /** Loads once; never rejects (a damaged file is quarantined and the ledger starts empty). */
  private load(): Promise<void> {
    this.loaded ??= this.readFromDisk();
    return this.loaded;
  }

  /**
   * Another provider instance on this state dir (a second gateway process, a CLI) may have buried a lease
   * since this one read the file: a lookup that misses reads the file again if it changed, so a destroyed
   * lease is never re-created here because of a stale memory.
   */
  private async refresh(): Promise<void> {
    if (this.durable && (await this.durable.signature()) !== this.seen) await this.readFromDisk();
  }

  private async readFromDisk(): Promise<void> {
    if (!this.durable) return;
    const signature = await this.durable.signature();
    merge(this.tombstones, await this.durable.read());
    this.seen = signature;
  }

  /** Persists the union of memory and disk; a failure is logged and left to the next write to repair. */
  private async persist(): Promise<void> {
    await this.durable?.update((onDisk) => {
      merge(this.tombstones, onDisk);
      this.evict();
      return `${JSON.stringify({ version: 1, tombstones: this.tombstones })}\n`;
    });
  }

  async tombstone(leaseId: string): Promise<Tombstone | undefined> {
    await this.load();
    if (!this.tombstones[leaseId]) await this.refresh();
    return this.tombstones[leaseId];
  }

  async all(): Promise<Array<[string, Tombstone]>> {
    await this.load();
    await this.refresh();
    return Object.entries(this.tombstones);
  }

  async bury(leaseId: string, sandboxName: string, now = Date.now()): Promise<void> {
    await this.load();
    if (this.tombstones[leaseId]) return;
    this.tombstones[leaseId] = { sandboxName, destroyedAt: now };
    this.evict();
    await this.persist();
  }

  async markAbsent(leaseId: string, now = Date.now()): Promise<void> {
    await this.load();
    const entry = this.tombstones[leaseId];
    if (!entry || entry.provenAbsentAt) return;
    entry.provenAbsentAt = now;
    await this.persist();
  }

  /** Forget the oldest proven-absent tombstones once the ledger is full; unproven ones are kept. */
  private evict(): void {
    const entries = Object.entries(this.tombstones);
    if (entries.length <= MAX_TOMBSTONES) return;
    const proven = entries
      .filter(([, t]) => t.provenAbsentAt !== undefined)
      .sort(([, a], [, b]) => a.destroyedAt - b.destroyedAt);
    for (const [leaseId] of proven.slice(0, entries.length - MAX_TOMBSTONES)) delete this.tombstones[leaseId];
  }
}
