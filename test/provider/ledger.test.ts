// The lease ledger on real files. Where a test needs to see the order of file operations or make one fail,
// it wraps node:fs/promises (the real calls still run).
import * as fs from "node:fs/promises";
import { mkdir, readdir, readFile, stat, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { DurableFs } from "../../src/infra/durable-file.js";
import { LeaseLedger } from "../../src/provider/ledger.js";
import { recordingLogger, renamesFailing, tempStateDirs } from "../support/state-files.js";

const stateDir = tempStateDirs("ledger");

const ledgerFile = (dir: string) => join(dir, "vercel-sandbox", "leases.json");

describe("lease ledger", () => {
  it("remembers tombstones across instances in a private file", async () => {
    const dir = await stateDir();
    const first = LeaseLedger.inDirectory(dir);
    await first.bury("vsb_1", "openclaw-1", 1000);
    await first.markAbsent("vsb_1", 2000);
    const second = LeaseLedger.inDirectory(dir);
    expect(await second.tombstone("vsb_1")).toEqual({
      sandboxName: "openclaw-1",
      destroyedAt: 1000,
      provenAbsentAt: 2000,
    });
    expect(await second.tombstone("vsb_2")).toBeUndefined();
    const file = ledgerFile(dir);
    expect((await stat(file)).mode & 0o777).toBe(0o600);
    expect(JSON.parse(await readFile(file, "utf8")).version).toBe(1);
  });

  it("burying twice keeps the first record", async () => {
    const ledger = new LeaseLedger();
    await ledger.bury("vsb_1", "openclaw-1", 1);
    await ledger.bury("vsb_1", "openclaw-1", 2);
    expect((await ledger.tombstone("vsb_1"))?.destroyedAt).toBe(1);
    expect(await ledger.all()).toHaveLength(1);
  });

  it.each([
    ["not JSON", "{ tombstones: "],
    ["another shape", JSON.stringify({ version: 7, leases: [] })],
    ["null", "null"],
  ])("a damaged file (%s) is reported once, moved aside and rebuilt", async (_what, body) => {
    const dir = await stateDir();
    await mkdir(join(dir, "vercel-sandbox"), { recursive: true });
    await writeFile(ledgerFile(dir), body);
    const { warnings, logger } = recordingLogger();
    const ledger = LeaseLedger.inDirectory(dir, { logger });

    expect(await ledger.tombstone("vsb_1")).toBeUndefined();
    await ledger.bury("vsb_1", "openclaw-1", 5);
    expect(await ledger.tombstone("vsb_2")).toBeUndefined();

    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toContain("damaged");
    const files = await readdir(join(dir, "vercel-sandbox"));
    const aside = files.filter((f) => /^leases\.json\.corrupt-[0-9]+$/.test(f));
    expect(aside).toHaveLength(1);
    expect(await readFile(join(dir, "vercel-sandbox", aside[0]!), "utf8")).toBe(body);
    expect(JSON.parse(await readFile(ledgerFile(dir), "utf8")).tombstones.vsb_1.sandboxName).toBe("openclaw-1");
  });

  it("a ledger path that cannot be read as a file is moved aside too, and writes still land", async () => {
    const dir = await stateDir();
    await mkdir(ledgerFile(dir), { recursive: true });
    const { warnings, logger } = recordingLogger();
    const ledger = LeaseLedger.inDirectory(dir, { logger });
    await ledger.bury("vsb_1", "openclaw-1", 5);
    expect(warnings).toHaveLength(1);
    expect(JSON.parse(await readFile(ledgerFile(dir), "utf8")).tombstones.vsb_1.destroyedAt).toBe(5);
  });

  it("a failed write is logged, and the next write stores every tombstone", async () => {
    const dir = await stateDir();
    const { warnings, logger } = recordingLogger();
    const ledger = LeaseLedger.inDirectory(dir, { logger, fs: renamesFailing(1) });
    await ledger.bury("vsb_1", "openclaw-1", 1);
    expect(warnings.join()).toContain("disk full");
    await ledger.bury("vsb_2", "openclaw-2", 2);
    const onDisk = JSON.parse(await readFile(ledgerFile(dir), "utf8")).tombstones;
    expect(Object.keys(onDisk).sort()).toEqual(["vsb_1", "vsb_2"]);
    expect((await readdir(join(dir, "vercel-sandbox"))).filter((f) => f.endsWith(".tmp"))).toEqual([]);
  });

  it("flushes the new file to disk before renaming it into place, then the directory", async () => {
    const dir = await stateDir();
    const events: string[] = [];
    const observed: DurableFs = {
      ...fs,
      open: (async (path: string, flags?: string, mode?: number) => {
        const handle = await fs.open(path, flags, mode);
        const sync = handle.sync.bind(handle);
        handle.sync = async () => {
          events.push(`sync ${path.endsWith(".tmp") ? "temp" : path === join(dir, "vercel-sandbox") ? "dir" : path}`);
          return sync();
        };
        return handle;
      }) as DurableFs["open"],
      rename: async (from, to) => {
        events.push(
          `rename ${String(from).endsWith(".tmp") ? "temp" : from} -> ${to === ledgerFile(dir) ? "ledger" : to}`,
        );
        return fs.rename(from, to);
      },
    };
    await LeaseLedger.inDirectory(dir, { fs: observed }).bury("vsb_1", "openclaw-1", 1);
    expect(events).toEqual(["sync temp", "rename temp -> ledger", "sync dir"]);
  });

  it("two instances on one file keep each other's tombstones", async () => {
    const dir = await stateDir();
    const a = LeaseLedger.inDirectory(dir);
    const b = LeaseLedger.inDirectory(dir);
    // Both have read the (empty) file before either writes, as two providers started together would.
    expect(await a.tombstone("vsb_x")).toBeUndefined();
    expect(await b.tombstone("vsb_x")).toBeUndefined();
    await a.bury("vsb_a1", "openclaw-a1", 1);
    await b.bury("vsb_b1", "openclaw-b1", 2);
    await Promise.all([a.bury("vsb_a2", "openclaw-a2", 3), b.bury("vsb_b2", "openclaw-b2", 4)]);
    await b.markAbsent("vsb_b1", 5);
    await a.markAbsent("vsb_a1", 6);
    const fresh = LeaseLedger.inDirectory(dir);
    expect(Object.fromEntries(await fresh.all())).toEqual({
      vsb_a1: { sandboxName: "openclaw-a1", destroyedAt: 1, provenAbsentAt: 6 },
      vsb_b1: { sandboxName: "openclaw-b1", destroyedAt: 2, provenAbsentAt: 5 },
      vsb_a2: { sandboxName: "openclaw-a2", destroyedAt: 3 },
      vsb_b2: { sandboxName: "openclaw-b2", destroyedAt: 4 },
    });
  });
  it("an enrolled mark survives a restart; a forgotten one is gone from the file and an older copy does not bring it back", async () => {
    const dir = await stateDir();
    const a = LeaseLedger.inDirectory(dir);
    const b = LeaseLedger.inDirectory(dir);
    await a.markEnrolled("vsb_1", "openclaw-1", "gw.example", 10);
    await a.markEnrolled("vsb_2", "openclaw-2", "gw.example", 11);
    // b read the file with both marks, then a forgets one: b's next write must not restore it.
    expect(await b.enrolled("vsb_1")).toEqual({ sandboxName: "openclaw-1", gateway: "gw.example", enrolledAt: 10 });
    await a.forgetEnrolled("vsb_1");
    await a.markEnrolled("vsb_3", "openclaw-3", "gw.example", 12);
    const restarted = LeaseLedger.inDirectory(dir);
    expect(await restarted.enrolled("vsb_1")).toBeUndefined();
    expect(await restarted.enrolled("vsb_2")).toMatchObject({ sandboxName: "openclaw-2" });
    expect(await restarted.enrolled("vsb_3")).toMatchObject({ sandboxName: "openclaw-3" });
    expect(Object.keys(JSON.parse(await readFile(ledgerFile(dir), "utf8")).enrolled).sort()).toEqual([
      "vsb_2",
      "vsb_3",
    ]);
  });

  it("burying a lease removes its mark, for every instance that merges the file", async () => {
    const dir = await stateDir();
    const a = LeaseLedger.inDirectory(dir);
    const b = LeaseLedger.inDirectory(dir);
    await a.markEnrolled("vsb_1", "openclaw-1", "gw.example", 1);
    expect(await b.enrolled("vsb_1")).toBeDefined();
    await a.bury("vsb_1", "openclaw-1", 2);
    // b still holds the mark in memory; its next write merges the tombstone and drops it.
    await b.markEnrolled("vsb_9", "openclaw-9", "gw.example", 3);
    expect(await LeaseLedger.inDirectory(dir).enrolled("vsb_1")).toBeUndefined();
    expect(await b.enrolled("vsb_1")).toBeUndefined();
    // A buried lease is never marked again.
    await b.markEnrolled("vsb_1", "openclaw-1", "gw.example", 4);
    expect(await LeaseLedger.inDirectory(dir).enrolled("vsb_1")).toBeUndefined();
  });

  it("a file written before marks existed loads, and keeps its tombstones once marks are added", async () => {
    const dir = await stateDir();
    await mkdir(join(dir, "vercel-sandbox"), { recursive: true });
    const old = { version: 1, tombstones: { vsb_old: { sandboxName: "openclaw-old", destroyedAt: 5 } } };
    await writeFile(ledgerFile(dir), JSON.stringify(old), { mode: 0o600 });
    const ledger = LeaseLedger.inDirectory(dir);
    expect(await ledger.enrolled("vsb_old")).toBeUndefined();
    await ledger.markEnrolled("vsb_new", "openclaw-new", "", 6);
    const file = JSON.parse(await readFile(ledgerFile(dir), "utf8"));
    expect(file.tombstones).toEqual(old.tombstones);
    expect(file.enrolled).toEqual({ vsb_new: { sandboxName: "openclaw-new", gateway: "", enrolledAt: 6 } });
  });

  it("marks are bounded: past 1024 the oldest goes first", async () => {
    const ledger = new LeaseLedger();
    for (let i = 0; i <= 1024; i += 1) await ledger.markEnrolled(`vsb_${i}`, `openclaw-${i}`, "gw", 1000 + i);
    expect(await ledger.enrolled("vsb_0")).toBeUndefined();
    expect(await ledger.enrolled("vsb_1")).toMatchObject({ enrolledAt: 1001 });
    expect(await ledger.enrolled("vsb_1024")).toMatchObject({ enrolledAt: 2024 });
  });
  it("reads the file again only when another instance changed it, not after its own write", async () => {
    const dir = await stateDir();
    let reads = 0;
    const counting: DurableFs = {
      ...fs,
      readFile: ((...args: Parameters<typeof fs.readFile>) => {
        reads += 1;
        return fs.readFile(...args);
      }) as DurableFs["readFile"],
    };
    const ledger = LeaseLedger.inDirectory(dir, { fs: counting });
    await ledger.bury("vsb_1", "openclaw-1", 1);
    const afterOwnWrite = reads;
    // A miss looks at the file again only if it changed: it is as this instance wrote it.
    expect(await ledger.tombstone("vsb_2")).toBeUndefined();
    expect(reads).toBe(afterOwnWrite);
    await LeaseLedger.inDirectory(dir).bury("vsb_2", "openclaw-2", 2);
    expect(await ledger.tombstone("vsb_2")).toMatchObject({ sandboxName: "openclaw-2" });
    expect(reads).toBe(afterOwnWrite + 1);
  });
});
