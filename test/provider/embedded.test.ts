// `backend: "embedded"`: a gateway without a Vercel account runs its workers on the emulator, started inside
// the gateway process on first use and stopped with the provider.
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { enrollingOptions, operationId } from "../../src/conformance/fixtures.js";
import { createVercelSandboxProvider } from "../../src/provider/index.js";

function descendants(pid: number): number[] {
  let children: number[] = [];
  try {
    children = readFileSync(`/proc/${pid}/task/${pid}/children`, "utf8")
      .trim()
      .split(/\s+/)
      .filter(Boolean)
      .map(Number);
  } catch {
    return [];
  }
  return children.flatMap((child) => [child, ...descendants(child)]);
}

describe("embedded backend", () => {
  it("provisions, inspects and destroys on an in-process emulator, which dispose stops with its processes", async () => {
    const before = new Set(descendants(process.pid));
    const provider = createVercelSandboxProvider({
      logger: { warn: () => undefined },
      enroll: async ({ sandbox, enrollment }) => {
        const node = await sandbox.runCommand("node", ["--version"]);
        expect(node.exitCode).toBe(0);
        return enrollment.waitForDeviceId();
      },
    });
    const profile = { backend: "embedded", vcpus: 1 };
    const lease = await provider.provision(profile, operationId(), enrollingOptions());
    expect(await provider.inspect({ leaseId: lease.leaseId, profile })).toMatchObject({ status: "active" });
    expect(descendants(process.pid).filter((pid) => !before.has(pid)).length).toBeGreaterThan(0);
    await provider.destroy({ leaseId: lease.leaseId, profile });
    expect(await provider.inspect({ leaseId: lease.leaseId, profile })).toEqual({ status: "destroyed" });
    await provider.dispose();
    expect(descendants(process.pid).filter((pid) => !before.has(pid))).toEqual([]);
  });
});
