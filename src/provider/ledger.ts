// The provider's own durable memory (external plugins get no host state store): which leases core has
// destroyed. A tombstone is the proof `maintain` needs before it may delete a sandbox that carries our
// tags, and it stops a late provision replay from resurrecting a destroyed lease. Writes are atomic
// (temp file + rename) and private (0600).
import { mkdir, readFile, rename, writeFile } from "node:fs/promises";
import { dirname, join } from "node:path";

export interface Tombstone {
  sandboxName: string;
  destroyedAt: number;
  /** Set once a later lookup proved the sandbox absent. */
  provenAbsentAt?: number;
}

interface LedgerFile {
  version: 1;
  tombstones: Record<string, Tombstone>;
}

const MAX_TOMBSTONES = 4096;

export class LeaseLedger {
  private state: LedgerFile = { version: 1, tombstones: {} };
  private loaded: Promise<void> | undefined;
  private writes: Promise<void> = Promise.resolve();

  /** Without a file the ledger lives in memory (tests, or a host that gives the plugin no state dir). */
  constructor(private readonly file?: string) {}

  static inDirectory(stateDir: string | undefined): LeaseLedger {
    return new LeaseLedger(stateDir ? join(stateDir, "vercel-sandbox", "leases.json") : undefined);
  }

  private load(): Promise<void> {
    this.loaded ??= (async () => {
      if (!this.file) return;
      try {
        const parsed = JSON.parse(await readFile(this.file, "utf8")) as Partial<LedgerFile>;
        if (parsed.version === 1 && parsed.tombstones) this.state = { version: 1, tombstones: parsed.tombstones };
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw error;
      }
    })();
    return this.loaded;
  }

  private persist(): Promise<void> {
    const file = this.file;
    if (!file) return Promise.resolve();
    const body = `${JSON.stringify(this.state)}\n`;
    this.writes = this.writes.then(async () => {
      await mkdir(dirname(file), { recursive: true, mode: 0o700 });
      const temp = `${file}.${process.pid}.tmp`;
      await writeFile(temp, body, { mode: 0o600 });
      await rename(temp, file);
    });
    return this.writes;
  }

  async tombstone(leaseId: string): Promise<Tombstone | undefined> {
    await this.load();
    return this.state.tombstones[leaseId];
  }

  async all(): Promise<Array<[string, Tombstone]>> {
    await this.load();
    return Object.entries(this.state.tombstones);
  }

  async bury(leaseId: string, sandboxName: string, now = Date.now()): Promise<void> {
    await this.load();
    if (this.state.tombstones[leaseId]) return;
    this.state.tombstones[leaseId] = { sandboxName, destroyedAt: now };
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

  /** Forget the oldest proven-absent tombstones once the ledger is full; unproven ones are kept. */
  private evict(): void {
    const entries = Object.entries(this.state.tombstones);
    if (entries.length <= MAX_TOMBSTONES) return;
    const proven = entries
      .filter(([, t]) => t.provenAbsentAt !== undefined)
      .sort(([, a], [, b]) => a.destroyedAt - b.destroyedAt);
    for (const [leaseId] of proven.slice(0, entries.length - MAX_TOMBSTONES)) delete this.state.tombstones[leaseId];
  }
}
