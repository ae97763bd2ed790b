// The provider's own durable memory (external plugins get no host state store): which leases core has
// destroyed, and which leases a provider on this state dir enrolled. A tombstone is the proof `maintain` needs
// before it may delete a sandbox that carries our tags, and it stops a late provision replay from resurrecting
// a destroyed lease. An enrolled mark lets a restarted gateway's replay look the sandbox up instead of creating
// first (a cold provision has no mark, so it never pays for the lookup); a mark is only a hint, so losing one
// costs a replay the create-first path, and a stale one costs it one lookup.
//
// The file must never stand between core and a teardown: it is a DurableFile (quarantined when damaged, a
// failed write logged and repaired by the next one, durable and private), and a write merges with what is on
// disk (union), so two provider instances on one file keep each other's tombstones.
import { join } from "node:path";
import { DamagedFileError, DurableFile, type DurableFileOptions } from "../infra/index.js";

export interface Tombstone {
  sandboxName: string;
  destroyedAt: number;
  /** Set once a later lookup proved the sandbox absent. */
  provenAbsentAt?: number;
}

type Tombstones = Record<string, Tombstone>;

/** A lease whose node enrolled and whose sandbox egress was narrowed to the gateway. */
export interface EnrolledMark {
  sandboxName: string;
  /** The gateway host the egress was narrowed to ("" when the gateway URL named none we could allow). */
  gateway: string;
  enrolledAt: number;
}

type Marks = Record<string, EnrolledMark>;

interface LedgerState {
  tombstones: Tombstones;
  enrolled: Marks;
}

interface LedgerFile {
  version: 1;
  tombstones: Tombstones;
  /** Absent in files written before marks existed. */
  enrolled?: Marks;
}

const MAX_TOMBSTONES = 4096;
/** Marks are hints: past the bound the oldest goes (its replay takes the create-first path). */
const MAX_MARKS = 1024;

function parseLedger(text: string): LedgerState {
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
  const out: LedgerState = { tombstones: {}, enrolled: {} };
  for (const [leaseId, t] of Object.entries(file.tombstones)) {
    if (t && typeof t.sandboxName === "string" && typeof t.destroyedAt === "number") out.tombstones[leaseId] = t;
  }
  for (const [leaseId, m] of Object.entries(file.enrolled ?? {})) {
    if (m && typeof m.sandboxName === "string" && typeof m.gateway === "string" && typeof m.enrolledAt === "number") {
      out.enrolled[leaseId] = m;
    }
  }
  return out;
}

/**
 * Union of two views of the ledger: every tombstone of either, absence proven if either proved it; every mark of
 * either unless this instance forgot it or the lease is buried.
 */
function merge(into: LedgerState, from: LedgerState, forgotten: ReadonlySet<string>): void {
  for (const [leaseId, theirs] of Object.entries(from.tombstones)) {
    const ours = into.tombstones[leaseId];
    if (!ours) into.tombstones[leaseId] = { ...theirs };
    else if (ours.provenAbsentAt === undefined && theirs.provenAbsentAt !== undefined) {
      ours.provenAbsentAt = theirs.provenAbsentAt;
    }
  }
  for (const [leaseId, mark] of Object.entries(from.enrolled)) {
    if (!into.enrolled[leaseId] && !forgotten.has(leaseId)) into.enrolled[leaseId] = { ...mark };
  }
  for (const leaseId of Object.keys(into.enrolled)) {
    if (into.tombstones[leaseId]) delete into.enrolled[leaseId];
  }
}

const LEDGER_FORMAT = {
  label: "lease ledger",
  contents: "tombstones and enrolled marks",
  empty: (): LedgerState => ({ tombstones: {}, enrolled: {} }),
  parse: parseLedger,
};

export class LeaseLedger {
  private readonly state: LedgerState = { tombstones: {}, enrolled: {} };
  /** Marks this instance removed: a merge with an older file must not bring them back. */
  private readonly forgotten = new Set<string>();
  private loaded: Promise<void> | undefined;
  private readonly durable: DurableFile<LedgerState> | undefined;

  /** Without a file the ledger lives in memory (tests, or a host that gives the plugin no state dir). */
  constructor(file?: string, options: DurableFileOptions = {}) {
    this.durable = file ? new DurableFile(file, LEDGER_FORMAT, options) : undefined;
  }

  static inDirectory(stateDir: string | undefined, options: DurableFileOptions = {}): LeaseLedger {
    return new LeaseLedger(stateDir ? join(stateDir, "vercel-sandbox", "leases.json") : undefined, options);
  }

  /** Loads once; never rejects (a damaged file is quarantined and the ledger starts empty). */
  private load(): Promise<void> {
    this.loaded ??= this.refresh();
    return this.loaded;
  }

  /**
   * Another provider instance on this state dir (a second gateway process, a CLI) may have buried a lease
   * since this one read the file: a lookup that misses reads the file again if it changed, so a destroyed
   * lease is never re-created here because of a stale memory.
   */
  private async refresh(): Promise<void> {
    const onDisk = await this.durable?.readIfChanged();
    if (onDisk) merge(this.state, onDisk, this.forgotten);
  }

  /** Persists the union of memory and disk; a failure is logged and left to the next write to repair. */
  private async persist(): Promise<void> {
    const written = await this.durable?.update((onDisk) => {
      merge(this.state, onDisk, this.forgotten);
      this.evict();
      const file: LedgerFile = { version: 1, tombstones: this.state.tombstones, enrolled: this.state.enrolled };
      return `${JSON.stringify(file)}\n`;
    });
    if (written) this.forgotten.clear();
  }

  async tombstone(leaseId: string): Promise<Tombstone | undefined> {
    await this.load();
    if (!this.state.tombstones[leaseId]) await this.refresh();
    return this.state.tombstones[leaseId];
  }

  async all(): Promise<Array<[string, Tombstone]>> {
    await this.load();
    await this.refresh();
    return Object.entries(this.state.tombstones);
  }

  async bury(leaseId: string, sandboxName: string, now = Date.now()): Promise<void> {
    await this.load();
    if (this.state.tombstones[leaseId]) return;
    this.state.tombstones[leaseId] = { sandboxName, destroyedAt: now };
    delete this.state.enrolled[leaseId];
    this.evict();
    await this.persist();
  }

  async markAbsent(leaseId: string, now = Date.now()): Promise<void> {
    await this.load();
    const entry = this.state.tombstones[leaseId];
    if (!entry || entry.provenAbsentAt) return;
    entry.provenAbsentAt = now;
    await this.persist();
  }

  /** The lease's enrolled mark, if a provider on this state dir enrolled it and it was not buried since. */
  async enrolled(leaseId: string): Promise<EnrolledMark | undefined> {
    await this.load();
    return this.state.enrolled[leaseId];
  }

  /** Marks the lease enrolled, its egress narrowed to `gateway`; written only when the mark is new or moved. */
  async markEnrolled(leaseId: string, sandboxName: string, gateway: string, now = Date.now()): Promise<void> {
    await this.load();
    const known = this.state.enrolled[leaseId];
    if (this.state.tombstones[leaseId] || (known?.sandboxName === sandboxName && known.gateway === gateway)) return;
    this.state.enrolled[leaseId] = { sandboxName, gateway, enrolledAt: now };
    this.forgotten.delete(leaseId);
    this.evict();
    await this.persist();
  }

  /** The lease is no longer known to be enrolled (its provision failed, or its sandbox was released). */
  async forgetEnrolled(leaseId: string): Promise<void> {
    await this.load();
    if (!this.state.enrolled[leaseId]) return;
    delete this.state.enrolled[leaseId];
    this.forgotten.add(leaseId);
    await this.persist();
  }

  /**
   * Forget the oldest proven-absent tombstones once the ledger is full (unproven ones are kept), and the
   * oldest marks past their bound.
   */
  private evict(): void {
    const entries = Object.entries(this.state.tombstones);
    if (entries.length > MAX_TOMBSTONES) {
      const proven = entries
        .filter(([, t]) => t.provenAbsentAt !== undefined)
        .sort(([, a], [, b]) => a.destroyedAt - b.destroyedAt);
      for (const [leaseId] of proven.slice(0, entries.length - MAX_TOMBSTONES)) delete this.state.tombstones[leaseId];
    }
    const marks = Object.entries(this.state.enrolled);
    if (marks.length > MAX_MARKS) {
      marks.sort(([, a], [, b]) => a.enrolledAt - b.enrolledAt);
      for (const [leaseId] of marks.slice(0, marks.length - MAX_MARKS)) delete this.state.enrolled[leaseId];
    }
  }
}
