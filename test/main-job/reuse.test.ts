// The rerun cache's keying (reuse.ts), pure: VM1's image is reused only when every input that went into it is
// unchanged and the emulator still holds it; a changed input rebuilds it and the plan names exactly that input;
// --fresh builds regardless and asks the emulator to keep nothing.
import { describe, expect, it } from "vitest";
import {
  type CachedImage,
  keptSnapshots,
  parseRecord,
  planVm1,
  type ReuseRecord,
  reuseLine,
  VM1_IMAGE_FORMAT,
  type Vm1ImageInputs,
  vm1ImageKey,
} from "../../src/main-job/reuse.js";

const inputs: Vm1ImageInputs = {
  format: VM1_IMAGE_FORMAT,
  openclaw: "2026.9.2",
  plugin: "a".repeat(64),
  runtime: "node24",
  node: "v24.22.3",
  baseConfig: "b".repeat(64),
};
const cachedOf = (from: Vm1ImageInputs): CachedImage => ({
  key: vm1ImageKey(from),
  snapshotId: "snap_Cached1",
  inputs: from,
  builtAt: "2026-12-01T22:00:00.000Z",
});
const record: ReuseRecord = { format: 1, vm1: cachedOf(inputs) };
const available = ["snap_Cached1"];

describe("VM1's image on a rerun", () => {
  it("is reused when nothing changed and the emulator restored it", () => {
    expect(planVm1(record, { ...inputs }, { fresh: false, available })).toEqual({ reuse: record.vm1 });
    expect(keptSnapshots(record, false)).toEqual(["snap_Cached1"]);
  });

  it("is rebuilt when one input changed, and the plan names exactly that input", () => {
    const changes: Array<[keyof Vm1ImageInputs, string | number]> = [
      ["plugin", "c".repeat(64)],
      ["openclaw", "2026.9.4"],
      ["runtime", "node22"],
      ["node", "v24.23.0"],
      ["baseConfig", "d".repeat(64)],
      ["format", VM1_IMAGE_FORMAT + 1],
    ];
    const keys = new Set([vm1ImageKey(inputs)]);
    for (const [name, value] of changes) {
      const changed = { ...inputs, [name]: value };
      const plan = planVm1(record, changed, { fresh: false, available });
      expect(plan).toEqual({ build: true, key: vm1ImageKey(changed), why: `changed: ${name}` });
      keys.add(vm1ImageKey(changed));
    }
    expect(keys.size).toBe(changes.length + 1);
  });

  it("is rebuilt when the emulator no longer holds the cached snapshot", () => {
    expect(planVm1(record, inputs, { fresh: false, available: [] })).toMatchObject({
      build: true,
      why: "the cached image snap_Cached1 is gone",
    });
  });

  it("--fresh builds even with a matching image, and the emulator is asked to keep nothing", () => {
    expect(planVm1(record, inputs, { fresh: true, available })).toEqual({
      build: true,
      key: vm1ImageKey(inputs),
      why: "--fresh",
    });
    expect(keptSnapshots(record, true)).toEqual([]);
  });

  it("a first run (no record, or a damaged one) builds", () => {
    expect(planVm1(undefined, inputs, { fresh: false, available })).toMatchObject({ why: "nothing cached" });
    for (const text of ["", "{", '{"format":2}', '{"format":1,"vm1":{"key":"k","snapshotId":"../x","inputs":{}}}']) {
      expect(parseRecord(text), text).toBeUndefined();
    }
    expect(parseRecord(JSON.stringify(record))).toEqual(record);
    expect(keptSnapshots(undefined, false)).toEqual([]);
  });

  it("the key does not depend on the order the inputs are listed in", () => {
    const reversed = Object.fromEntries(Object.entries(inputs).reverse()) as unknown as Vm1ImageInputs;
    expect(vm1ImageKey(reversed)).toBe(vm1ImageKey(inputs));
  });

  it("the summary says what was reused with its key, or what was built and why", () => {
    expect(reuseLine({ reuse: record.vm1! })).toBe(
      `  reused: VM1's image snap_Cached1 (key ${record.vm1!.key.slice(0, 12)}, built 2026-12-01T22:00:00.000Z)`,
    );
    expect(reuseLine({ build: true, key: "0123456789abcdef", why: "changed: plugin" }, "snap_New")).toBe(
      "  built: VM1's image (key 0123456789ab; changed: plugin); captured as snap_New for the next run",
    );
  });
});
