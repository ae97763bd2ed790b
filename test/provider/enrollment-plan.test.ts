import { describe, expect, it } from "vitest";
import { BOOTSTRAP_TOKEN, fakeEnrollment, SETUP_CODE } from "../../src/conformance/fixtures.js";
import type { NodeEnrollment } from "../../src/infra/worker-types.js";
import { EnrollmentDescriptorError, satisfiesEngines } from "../../src/provider/enrollment/index.js";
import { enrollmentPlan, normalizeFingerprint } from "../../src/provider/enrollment/plan.js";
import { evidenceText, outcomeOf, parseEvents, phasesOf } from "../../src/provider/enrollment/protocol.js";
import { egressPolicy } from "../../src/provider/policy.js";
import { parseSettings } from "../../src/settings/profile.js";

const LEASE = "vsb_0123456789abcdef01234567";

function withBootstrap(patch: Partial<NodeEnrollment["nodeBootstrap"]>): NodeEnrollment {
  const enrollment = fakeEnrollment();
  return { ...enrollment, nodeBootstrap: { ...enrollment.nodeBootstrap, ...patch } };
}

describe("enrollment plan", () => {
  it("carries what the box needs and no secret", () => {
    const plan = enrollmentPlan(LEASE, withBootstrap({ tlsFingerprint: `sha256:${"AB:".repeat(31)}AB` }));
    expect(plan).toMatchObject({
      action: "enroll",
      leaseId: LEASE,
      mode: "connect",
      openclawVersion: "2026.9.2",
      artifact: { sha256: "0".repeat(64), bytes: 1, pin: "ab".repeat(32) },
    });
    const text = JSON.stringify(plan);
    expect(text).not.toContain(BOOTSTRAP_TOKEN);
    expect(text).not.toContain(SETUP_CODE);
  });

  it.each([
    [{ url: "ftp://gw.example/x" }, "nodeBootstrap.url"],
    [{ url: "https://user:pw@gw.example/x" }, "nodeBootstrap.url"],
    [{ url: "https://gw.example/x?token=1" }, "nodeBootstrap.url"],
    [{ url: "http://gw.example/x", tlsFingerprint: "ab".repeat(32) }, "nodeBootstrap.url"],
    [{ sha256: "xyz" }, "nodeBootstrap.sha256"],
    [{ bytes: 0 }, "nodeBootstrap.bytes"],
    [{ bytes: 1.5 }, "nodeBootstrap.bytes"],
    [{ tlsFingerprint: "not-a-pin" }, "nodeBootstrap.tlsFingerprint"],
    [{ enabledPluginIds: ["ok", "--inject"] }, "nodeBootstrap.enabledPluginIds"],
    [{ token: "" }, "nodeBootstrap.token"],
  ])("refuses descriptor %j, naming %s", (patch, field) => {
    const error = (() => {
      try {
        enrollmentPlan(LEASE, withBootstrap(patch));
      } catch (e) {
        return e;
      }
    })();
    expect(error).toBeInstanceOf(EnrollmentDescriptorError);
    expect((error as EnrollmentDescriptorError).field).toBe(field);
    expect((error as Error).message).not.toContain(BOOTSTRAP_TOKEN);
  });

  it("normalizes a pin from any usual spelling", () => {
    const hex = "0a".repeat(32);
    expect(normalizeFingerprint(`sha256:${"0A:".repeat(31)}0A`)).toBe(hex);
    expect(normalizeFingerprint(hex.toUpperCase())).toBe(hex);
  });
});

describe("egress by stage (gateway-only by default)", () => {
  it("nothing at create, gateway and registry for the bootstrap, the gateway alone once enrolled", () => {
    const settings = parseSettings({});
    expect(egressPolicy(settings, ["gw.example.com"], "create")).toBe("deny-all");
    expect(egressPolicy(settings, ["gw.example.com"], "bootstrap")).toEqual({
      allow: ["registry.npmjs.org", "gw.example.com"],
    });
    expect(egressPolicy(settings, ["gw.example.com"], "enrolled")).toEqual({ allow: ["gw.example.com"] });
  });

  it("a gateway at an IP address is allowed as that one address; profile additions stay at every stage", () => {
    const settings = parseSettings({ networkPolicy: { allow: ["github.com"], allowCidrs: ["10.9.0.0/16"] } });
    expect(egressPolicy(settings, ["10.213.0.1"], "create")).toEqual({
      allow: ["github.com"],
      subnets: { allow: ["10.9.0.0/16"] },
    });
    expect(egressPolicy(settings, ["[fd00::1]"], "enrolled")).toEqual({
      allow: ["github.com"],
      subnets: { allow: ["fd00::1/128", "10.9.0.0/16"] },
    });
    // A mapped or expanded spelling becomes the one address the firewall matches traffic against.
    for (const spelling of ["[::ffff:10.213.0.1]", "[::ffff:ad5:1]", "[0:0:0:0:0:ffff:0ad5:0001]"]) {
      expect(egressPolicy(settings, [spelling], "enrolled")).toEqual({
        allow: ["github.com"],
        subnets: { allow: ["10.213.0.1/32", "10.9.0.0/16"] },
      });
    }
    expect(egressPolicy(settings, ["[FD00:0:0:0:0:0:0:1]"], "enrolled")).toEqual({
      allow: ["github.com"],
      subnets: { allow: ["fd00::1/128", "10.9.0.0/16"] },
    });
  });

  it("allow-all opts out at every stage", () => {
    const settings = parseSettings({ networkPolicy: "allow-all" });
    for (const stage of ["create", "bootstrap", "enrolled"] as const) {
      expect(egressPolicy(settings, ["gw"], stage)).toBe("allow-all");
    }
  });
});

describe("node engines (>=22.22.3 <23, >=24.15.0 <25, >=25.9.0)", () => {
  it.each([
    ["v22.22.3", true],
    ["v22.22.2", false],
    ["v22.23.0", true],
    ["v23.11.0", false],
    ["v24.14.9", false],
    ["v24.15.0", true],
    ["v24.22.3", true],
    ["v25.8.9", false],
    ["v25.9.0", true],
    ["v26.0.0", true],
    ["v20.19.0", false],
    ["garbage", false],
  ])("%s → %s", (version, ok) => {
    expect(satisfiesEngines(version)).toBe(ok);
  });
});

/** Runs the program on this machine in a fresh home; resolves with its output and what it left in that home. */
describe("bootstrap protocol", () => {
  it("reads its own lines and ignores anything else on stdout", () => {
    const events = parseEvents(
      [
        "npm warn something",
        '{"vsb":true,"event":"phase","phase":"download","ms":12,"detail":null}',
        '{"vsb":true,"event":"done","adopted":false,"pid":7,"runtime":"installed"}',
        '{"vsb":true,"event":"pha',
      ].join("\n"),
    );
    expect(phasesOf(events).map((p) => [p.phase, p.ms])).toEqual([["download", 12]]);
    expect(outcomeOf(events)).toMatchObject({ event: "done", pid: 7 });
  });

  it("bounds evidence and says why when there is none", () => {
    const text = evidenceText({ event: "evidence", runtime: "absent", node: "alive", logTail: "x".repeat(5000) });
    expect(text.startsWith("box evidence: ")).toBe(true);
    expect(text.length).toBeLessThanOrEqual(2048 + 20);
    expect(evidenceText(undefined, "exit 1")).toBe("box evidence unavailable: exit 1");
  });
});
