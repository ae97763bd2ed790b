// The runtime measurement's pure halves: what a box's answer must look like to be compared at all, and which
// differences refuse an image. (The measurement on a box runs in untrusted.test.ts.)
import { describe, expect, it } from "vitest";
import { parseRuntimeDigest, RuntimeDigestError, runtimeChangedReason } from "../../src/preparation/runtime-digest.js";

const A = "a".repeat(64);
const B = "b".repeat(64);

describe("runtime digest", () => {
  it("reads the node line and the runtimes digest, or `absent` where no runtime is installed", () => {
    expect(parseRuntimeDigest(`/opt/node/bin/node ${A}\n${B}\n`)).toEqual({
      node: `/opt/node/bin/node ${A}`,
      runtimes: B,
    });
    expect(parseRuntimeDigest(`/opt/node/bin/node ${A}\nabsent\n`).runtimes).toBe("absent");
  });

  it("refuses any other answer: extra lines, a relative path, a short digest, nothing", () => {
    for (const answer of [
      `/opt/node/bin/node ${A}\n${B}\nmore\n`,
      `node ${A}\n${B}\n`,
      `/opt/node/bin/node abc\n${B}\n`,
      `/opt/node/bin/node ${A}\nxyz\n`,
      "",
    ]) {
      expect(() => parseRuntimeDigest(answer)).toThrow(RuntimeDigestError);
    }
  });

  it("names what changed: the node, the runtime files, or both; nothing when both match", () => {
    const recorded = { node: `/opt/node/bin/node ${A}`, runtimes: B };
    expect(runtimeChangedReason(recorded, { ...recorded })).toBeUndefined();
    expect(runtimeChangedReason(recorded, { ...recorded, node: `/home/u/bin/node ${A}` })).toMatch(
      /^the node on PATH differ/,
    );
    expect(runtimeChangedReason(recorded, { ...recorded, runtimes: A })).toMatch(/^the OpenClaw runtime files differ/);
    expect(runtimeChangedReason(recorded, { node: "/x", runtimes: A })).toMatch(/node on PATH and the OpenClaw/);
  });
});
