import { describe, expect, it } from "vitest";
import { allocate } from "../../src/provider/allocation.js";
import {
  createRequest,
  egressPolicy,
  gatewayHostOf,
  machineOptions,
  vcpusOfMachineClass,
} from "../../src/provider/policy.js";
import { parseSettings } from "../../src/settings/profile.js";

describe("sandbox shape", () => {
  it("egress is deny-by-default: the package registry, the gateway once known, and the profile's additions", () => {
    const settings = parseSettings({ networkPolicy: { allow: ["example.org"], allowCidrs: ["10.1.0.0/16"] } });
    expect(egressPolicy(settings)).toEqual({
      allow: ["registry.npmjs.org", "example.org"],
      subnets: { allow: ["10.1.0.0/16"] },
    });
    expect(egressPolicy(parseSettings({}), ["gw.example.com"])).toEqual({
      allow: ["registry.npmjs.org", "gw.example.com"],
    });
    expect(egressPolicy(parseSettings({ networkPolicy: "allow-all" }), ["gw"])).toBe("allow-all");
  });

  it("the create request is named, tagged, non-persistent and sized by the chosen vCPUs", () => {
    const settings = parseSettings({ runtime: "node22", ports: [3000], snapshots: { keepLast: 3, expiration: "1d" } });
    const allocation = allocate("gw", `provision:v2:${"e".repeat(64)}`);
    expect(createRequest(allocation, settings, {}, 4)).toMatchObject({
      name: allocation.sandboxName,
      runtime: "node22",
      resources: { vcpus: 4 },
      timeout: settings.timeoutMs,
      ports: [3000],
      persistent: false,
      snapshotExpiration: 86_400_000,
      keepLastSnapshots: { count: 3 },
      tags: { "openclaw-scope": "gw" },
    });
  });

  it("machine options list every vCPU choice with memory, the profile's as default", () => {
    const options = machineOptions(parseSettings({ vcpus: 4 }));
    expect(options.map((o) => [o.id, o.cpu, o.memoryGb])).toEqual([
      ["vcpu-1", 1, 2],
      ["vcpu-2", 2, 4],
      ["vcpu-4", 4, 8],
      ["vcpu-8", 8, 16],
    ]);
    expect(options.filter((o) => "default" in o).map((o) => o.id)).toEqual(["vcpu-4"]);
    for (const option of options) expect(option.label).toBe(option.label.trim());
  });

  it.each([
    ["vcpu-8", 8],
    ["vcpu-3", undefined],
    ["large", undefined],
    ["vcpu-08x", undefined],
  ])("machine class %s maps to %s vCPUs", (machineClass, vcpus) => {
    expect(vcpusOfMachineClass(machineClass)).toBe(vcpus);
  });

  it("the gateway host comes from the bootstrap URL", () => {
    expect(gatewayHostOf("https://gw.example.com:8443/__openclaw__/x")).toBe("gw.example.com");
    expect(gatewayHostOf("not a url")).toBeUndefined();
  });
});
