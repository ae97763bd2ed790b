// The longest-first sequencer: listed spec files start first, longest first; the rest keep vitest's order; and
// every listed file exists (a renamed spec would otherwise fall back to the end without a word).
import { access } from "node:fs/promises";
import { describe, expect, it } from "vitest";
import { FIRST, LONG_SPEC_SECONDS, longestFirst } from "./sequencer.js";

describe("longestFirst", () => {
  it("puts the listed files first, longest first, and keeps the order of the rest", () => {
    const seconds = { "b.test.ts": 10, "d.test.ts": 300, "e.test.ts": 20 };
    const files = ["a.test.ts", "b.test.ts", "c.test.ts", "d.test.ts", "e.test.ts", "f.test.ts"];
    expect(longestFirst(files, (f) => f, seconds, [])).toEqual([
      "d.test.ts",
      "e.test.ts",
      "b.test.ts",
      "a.test.ts",
      "c.test.ts",
      "f.test.ts",
    ]);
  });

  it("starts the files that must go first before all others, in their order, then the longest", () => {
    const seconds = { "b.test.ts": 10, "d.test.ts": 300 };
    const files = ["a.test.ts", "b.test.ts", "c.test.ts", "d.test.ts"];
    expect(longestFirst(files, (f) => f, seconds, ["c.test.ts", "b.test.ts"])).toEqual([
      "c.test.ts",
      "b.test.ts",
      "d.test.ts",
      "a.test.ts",
    ]);
  });

  it("lists only spec files that exist", async () => {
    for (const file of [...Object.keys(LONG_SPEC_SECONDS), ...FIRST]) {
      await expect(access(file)).resolves.toBeUndefined();
    }
  });
});
