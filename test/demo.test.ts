// `npm run demo:sdk`, the SDK walk-through of the emulator and the provider, must keep working: both halves run
// to completion. (The README's main job, `npm start`, is test/main-job.test.ts.)
import { describe, expect, it } from "vitest";
import { BOOTSTRAP_TOKEN, SETUP_CODE } from "../src/conformance/fixtures.js";
import { runEmulatorDemo } from "../src/demo/emulator.js";
import { runProviderDemo } from "../src/demo/provider.js";

describe("the SDK walk-through", () => {
  it("the emulator lifecycle and the provider lifecycle both finish and leave nothing behind", async () => {
    const lines: string[] = [];
    await runEmulatorDemo((line) => lines.push(line));
    await runProviderDemo((line) => lines.push(line));
    const text = lines.join("\n");
    expect(text).toContain("hello from the demo");
    expect(text).toMatch(/replay adopts, creates nothing/);
    expect(text).toMatch(/inspect .*\n\s+destroyed/);
    expect(text).toContain("provider demo finished: no sandbox left behind");
    expect(text).not.toContain(BOOTSTRAP_TOKEN);
    expect(text).not.toContain(SETUP_CODE);
  });
});
