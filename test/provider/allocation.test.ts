import { describe, expect, it } from "vitest";
import {
  AllocationError,
  allocate,
  leaseIdOf,
  ownershipTags,
  profileFingerprint,
  sandboxNameOf,
} from "../../src/provider/allocation.js";

const op = (fill: string) => `provision:v2:${fill.repeat(64).slice(0, 64)}`;

describe("allocation", () => {
  it("is a pure function of scope and operation id", () => {
    expect(allocate("gw-1", op("a"))).toEqual(allocate("gw-1", op("a")));
    expect(allocate("gw-1", op("a")).leaseId).not.toBe(allocate("gw-1", op("b")).leaseId);
    expect(allocate("gw-1", op("a")).leaseId).not.toBe(allocate("gw-2", op("a")).leaseId);
    expect(allocate(undefined, op("a"))).toEqual(allocate("default", op("a")));
  });

  it("names the sandbox after the lease, and back", () => {
    const { leaseId, sandboxName } = allocate("gw", op("c"));
    expect(leaseId).toMatch(/^vsb_[0-9a-f]{24}$/);
    expect(sandboxNameOf(leaseId)).toBe(sandboxName);
    expect(leaseIdOf(sandboxName)).toBe(leaseId);
    expect(leaseIdOf("someone-elses-sandbox")).toBeUndefined();
  });

  it("keeps the lease id and sandbox name of today's operation ids (existing sandboxes are still adopted)", () => {
    // Pinned from the release that accepted only provision:v2 ids; changing the hash input would orphan them.
    expect(allocate("gw-golden", `provision:v2:${"0123456789abcdef".repeat(4)}`)).toEqual({
      leaseId: "vsb_ef8f00a7fd65c6b0667329c7",
      sandboxName: "openclaw-ef8f00a7fd65c6b0667329c7",
      scope: "gw-golden",
      operationTag: "0123456789abcdef",
    });
  });

  it.each(["provision:abc", `provision:${"a".repeat(64)}`, `provision:v2:${"g".repeat(64)}`, "provision:v3:x/ y", "é"])(
    "derives a lease from any other operation id too (%j), with a hashed tag",
    (operationId) => {
      const allocation = allocate("gw", operationId);
      expect(allocation.leaseId).toMatch(/^vsb_[0-9a-f]{24}$/);
      expect(allocation).toEqual(allocate("gw", operationId));
      expect(allocation.leaseId).not.toBe(allocate("gw", `${operationId}.`).leaseId);
      expect(allocation.operationTag).toMatch(/^[0-9a-f]{16}$/);
      expect(operationId).not.toContain(allocation.operationTag);
    },
  );

  it("refuses an empty operation id", () => {
    expect(() => allocate("gw", "")).toThrow(AllocationError);
  });

  it.each(["cbx_123", "vsb_xyz", `vsb_${"a".repeat(25)}`, ""])("refuses foreign lease id %j", (leaseId) => {
    expect(() => sandboxNameOf(leaseId)).toThrow(AllocationError);
  });

  it("tags carry scope, profile fingerprint and operation, after the user's tags", () => {
    const allocation = allocate("gw", op("d"));
    expect(ownershipTags(allocation, { vcpus: 2 }, { team: "x" })).toEqual({
      team: "x",
      "openclaw-scope": "gw",
      "openclaw-profile": profileFingerprint({ vcpus: 2 }),
      "openclaw-op": "d".repeat(16),
    });
  });

  it("the profile fingerprint ignores key order and undefined values", () => {
    expect(profileFingerprint({ a: 1, b: { c: 2, d: 3 } })).toBe(
      profileFingerprint({ b: { d: 3, c: 2 }, a: 1, e: undefined }),
    );
    expect(profileFingerprint({ a: 1 })).not.toBe(profileFingerprint({ a: 2 }));
  });
});
