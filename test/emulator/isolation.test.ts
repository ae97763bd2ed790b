// Without root the emulator cannot give sandboxes their own namespaces; it must say so at start, not later.
import { afterEach, describe, expect, it, vi } from "vitest";
import { EmulatorIsolationError, startLocalSandboxApi } from "../../src/emulator/index.js";

describe("isolation preconditions", () => {
  afterEach(() => {
    vi.restoreAllMocks();
  });

  it("refuses to start for a non-root user, naming the fix", async () => {
    vi.spyOn(process, "getuid").mockReturnValue(1000);
    const error = await startLocalSandboxApi().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(EmulatorIsolationError);
    expect((error as Error).message).toMatch(/needs root/);
    expect((error as Error).message).toMatch(/sudo/);
  });
});
