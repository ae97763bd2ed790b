// Which Node each OpenClaw release's node runtime needs on the box, and how its plugins are enabled around the
// runtime pointer: decided per release from the version the gateway's node bootstrap carries.
import { describe, expect, it } from "vitest";
import {
  atLeastRelease,
  enginesFor,
  pluginActivation,
  releaseOf,
  satisfiesEngines,
} from "../../src/provider/enrollment/engines.js";
import { enrollmentPlan } from "../../src/provider/enrollment/plan.js";

const ok = (openclaw: string, node: string) => satisfiesEngines(node, enginesFor(openclaw).ranges);

describe("node engines per OpenClaw release", () => {
  it("2026.9.2 keeps its own range: Node 22.22.3+, 24.15+, 25.9+", () => {
    expect(["v22.22.3", "v24.15.0", "v25.9.0", "v26.0.0"].map((v) => ok("2026.9.2", v))).toEqual([
      true,
      true,
      true,
      true,
    ]);
    expect(["v22.22.2", "v24.14.9", "v25.8.9"].map((v) => ok("2026.9.2", v))).toEqual([false, false, false]);
  });

  it.each(["2026.9.3", "2026.9.4", "2026.9.5", "2026.9.6", "2026.10.1", "2027.1.0"])(
    "%s needs Node >=24.16.0 <25 or >=26.1.0",
    (openclaw) => {
      for (const node of ["v24.16.0", "v24.22.3", "v26.1.0", "v27.0.0"]) expect(ok(openclaw, node), node).toBe(true);
      for (const node of ["v22.22.3", "v24.15.0", "v25.9.0", "v26.0.0"]) expect(ok(openclaw, node), node).toBe(false);
    },
  );

  it("an unreadable version gets the stricter floor", () => {
    expect(enginesFor("garbage").text).toBe(">=24.16.0 <25 or >=26.1.0");
    expect(releaseOf("2026.9.3-beta.1")).toEqual([2026, 9, 3]);
    expect(releaseOf("nine")).toBeUndefined();
    expect(atLeastRelease("2026.9.10", [2026, 9, 5])).toBe(true);
    expect(atLeastRelease("2026.8.30", [2026, 9, 5])).toBe(false);
  });
});

describe("plugin activation around the runtime pointer", () => {
  it("up to 2026.9.4: the pointer first, then one enable call per plugin", () => {
    for (const version of ["2026.9.2", "2026.9.3", "2026.9.4"]) {
      expect(pluginActivation(version, ["codex", "x"])).toEqual({ batches: [["codex"], ["x"]], pointerFirst: true });
    }
  });

  it("from 2026.9.5: one enable call for all plugins, then the pointer", () => {
    for (const version of ["2026.9.5", "2026.9.6"]) {
      expect(pluginActivation(version, ["codex", "x"])).toEqual({ batches: [["codex", "x"]], pointerFirst: false });
      expect(pluginActivation(version, [])).toEqual({ batches: [], pointerFirst: false });
    }
  });

  it("an enrollment plan carries the engines and the activation of the gateway's release", () => {
    const enrollment = (openclawVersion: string) => ({
      nodeBootstrap: {
        url: "https://gw.example/bootstrap.tgz",
        token: "t",
        sha256: "a".repeat(64),
        bytes: 10,
        openclawVersion,
        enabledPluginIds: ["codex"],
      },
      openclawVersion,
      displayName: "Cloud worker",
      waitForDeviceId: async () => "device",
      mode: "connect" as const,
      setupCode: "code",
      setupId: "setup",
    });
    const pinned = enrollmentPlan("vsb_lease", enrollment("2026.9.2"));
    const newest = enrollmentPlan("vsb_lease", enrollment("2026.9.6"));
    expect(pinned.enginesText).toBe(">=22.22.3 <23, >=24.15.0 <25 or >=25.9.0");
    expect(newest.enginesText).toBe(">=24.16.0 <25 or >=26.1.0");
    expect(pinned.pluginActivation).toEqual({ batches: [["codex"]], pointerFirst: true });
    expect(newest.pluginActivation).toEqual({ batches: [["codex"]], pointerFirst: false });
  });
});
