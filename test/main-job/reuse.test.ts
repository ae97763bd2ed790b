// The rerun cache's keying (reuse.ts), pure: VM1's image is two layers, the gateway layer and the plugin layer on
// it; a layer is reused only when every input that went into it is unchanged and the emulator still holds it. A
// changed plugin rebuilds the plugin layer alone; a changed gateway version rebuilds both (the plugin layer's
// inputs name the gateway layer's key); the plan names exactly the inputs that changed; --fresh builds regardless
// and asks the emulator to keep nothing.
import { describe, expect, it } from "vitest";
import {
  type CachedImage,
  type GatewayImageInputs,
  type ImageInputs,
  imageKey,
  keptSnapshots,
  type PluginImageInputs,
  parseRecord,
  planImage,
  type ReuseRecord,
  reuseLine,
  VM1_IMAGE_FORMAT,
} from "../../src/main-job/reuse.js";

const gatewayInputs: GatewayImageInputs = {
  format: VM1_IMAGE_FORMAT,
  openclaw: "2026.9.2",
  runtime: "node24",
  node: "v24.22.3",
};
const pluginOf = (gateway: GatewayImageInputs, plugin = "a".repeat(64)): PluginImageInputs => ({
  gateway: imageKey(gateway),
  plugin,
  baseConfig: "b".repeat(64),
  codex: "",
});
const cachedOf = (inputs: ImageInputs, snapshotId: string): CachedImage => ({
  key: imageKey(inputs),
  snapshotId,
  inputs,
  builtAt: "2026-12-01T22:00:00.000Z",
});
const record: ReuseRecord = {
  format: 1,
  gateway: cachedOf(gatewayInputs, "snap_Gateway1"),
  vm1: cachedOf(pluginOf(gatewayInputs), "snap_Plugin1"),
};
const available = ["snap_Gateway1", "snap_Plugin1"];
const opts = { fresh: false, available };
/** Which layers a run with these inputs rebuilds, and why. */
const plans = (gateway: GatewayImageInputs, plugin: string) => {
  const g = planImage(record.gateway, gateway, opts);
  const p = planImage(record.vm1, pluginOf(gateway, plugin), opts);
  return { gateway: "reuse" in g ? "reuse" : g.why, plugin: "reuse" in p ? "reuse" : p.why };
};

describe("VM1's image on a rerun", () => {
  it("both layers are reused when nothing changed and the emulator restored them", () => {
    expect(planImage(record.gateway, { ...gatewayInputs }, opts)).toEqual({ reuse: record.gateway });
    expect(planImage(record.vm1, pluginOf({ ...gatewayInputs }), opts)).toEqual({ reuse: record.vm1 });
    expect(keptSnapshots(record, false)).toEqual(["snap_Gateway1", "snap_Plugin1"]);
  });

  it("a changed plugin rebuilds the plugin layer alone", () => {
    expect(plans(gatewayInputs, "c".repeat(64))).toEqual({ gateway: "reuse", plugin: "changed: plugin" });
  });

  it("a changed gateway input rebuilds both layers, naming that input and then the gateway layer", () => {
    const changes: Array<[keyof GatewayImageInputs, string | number]> = [
      ["openclaw", "2026.9.4"],
      ["runtime", "node22"],
      ["node", "v24.23.0"],
      ["format", VM1_IMAGE_FORMAT + 1],
    ];
    const keys = new Set([imageKey(gatewayInputs)]);
    for (const [name, value] of changes) {
      const changed = { ...gatewayInputs, [name]: value };
      expect(plans(changed, "a".repeat(64))).toEqual({ gateway: `changed: ${name}`, plugin: "changed: gateway" });
      keys.add(imageKey(changed));
    }
    expect(keys.size).toBe(changes.length + 1);
  });

  it("a record of another shape (an older format) is rebuilt as a format change", () => {
    const older = cachedOf({ format: 1, openclaw: "2026.9.2", plugin: "a".repeat(64) }, "snap_Old");
    expect(planImage(older, pluginOf(gatewayInputs), opts)).toMatchObject({ build: true, why: "changed: format" });
  });

  it("a layer the emulator no longer holds is rebuilt", () => {
    expect(planImage(record.vm1, pluginOf(gatewayInputs), { fresh: false, available: ["snap_Gateway1"] })).toEqual({
      build: true,
      key: imageKey(pluginOf(gatewayInputs)),
      why: "the cached image snap_Plugin1 is gone",
    });
  });

  it("--fresh builds even with matching layers, and the emulator is asked to keep nothing", () => {
    expect(planImage(record.gateway, gatewayInputs, { fresh: true, available })).toEqual({
      build: true,
      key: imageKey(gatewayInputs),
      why: "--fresh",
    });
    expect(keptSnapshots(record, true)).toEqual([]);
  });

  it("a first run (no record, or a damaged one) builds", () => {
    expect(planImage(undefined, gatewayInputs, opts)).toMatchObject({ why: "nothing cached" });
    for (const text of [
      "",
      "{",
      '{"format":2}',
      '{"format":1,"vm1":{"key":"k","snapshotId":"../x","inputs":{}}}',
      // An API front the next run could not listen on again.
      '{"format":1,"front":{"address":"10.215.1.2","port":"8080"}}',
      '{"format":1,"front":{"address":"10.215.1.2","port":70000}}',
      '{"format":1,"front":null}',
    ]) {
      expect(parseRecord(text), text).toBeUndefined();
    }
    expect(parseRecord(JSON.stringify(record))).toEqual(record);
    expect(keptSnapshots(undefined, false)).toEqual([]);
  });

  it("the key does not depend on the order the inputs are listed in", () => {
    const reversed = Object.fromEntries(Object.entries(gatewayInputs).reverse());
    expect(imageKey(reversed)).toBe(imageKey(gatewayInputs));
  });

  it("the summary says which layer was reused with its key, or built and why", () => {
    expect(reuseLine("VM1's plugin layer", { reuse: record.vm1! })).toBe(
      `  reused: VM1's plugin layer snap_Plugin1 (key ${record.vm1!.key.slice(0, 12)}, built 2026-12-01T22:00:00.000Z)`,
    );
    expect(
      reuseLine("VM1's plugin layer", { build: true, key: "0123456789abcdef", why: "changed: plugin" }, "snap_New"),
    ).toBe("  built: VM1's plugin layer (key 0123456789ab; changed: plugin); captured as snap_New for the next run");
  });
});
