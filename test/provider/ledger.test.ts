import { mkdtemp, readFile, rm, stat } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { LeaseLedger } from "../../src/provider/ledger.js";

describe("lease ledger", () => {
  const dirs: string[] = [];
  afterEach(async () => {
    for (const dir of dirs.splice(0)) await rm(dir, { recursive: true, force: true });
  });

  it("remembers tombstones across instances in a private file", async () => {
    const dir = await mkdtemp(join(tmpdir(), "ledger-"));
    dirs.push(dir);
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
    const file = join(dir, "vercel-sandbox", "leases.json");
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
});
