// `backend: "embedded"`: a gateway without a Vercel account runs its workers on the emulator, which the plugin
// entry starts inside the gateway process on first use and its service stops on gateway stop. The provider
// itself only receives the backend (see boundaries.test.ts).
import { readFileSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { WorkerProviderError } from "openclaw/plugin-sdk/plugin-entry";
import { afterAll, describe, expect, it } from "vitest";
import { enrollingOptions, fakeEnrollment, operationId } from "../../src/conformance/fixtures.js";
import { startLocalSandboxApi } from "../../src/emulator/index.js";
import entry from "../../src/index.js";
import { createVercelSandboxProvider } from "../../src/provider/index.js";
import { fakePluginApi } from "./plugin-api.js";

/** Child pids of `pid`; a process that exited meanwhile has none, but this process must be readable. */
function childrenOf(pid: number, mustExist: boolean): number[] {
  try {
    return readFileSync(`/proc/${pid}/task/${pid}/children`, "utf8").trim().split(/\s+/).filter(Boolean).map(Number);
  } catch (error) {
    if (mustExist || (error as NodeJS.ErrnoException).code !== "ENOENT") throw error;
    return [];
  }
}

function descendants(pid: number, mustExist = true): number[] {
  return childrenOf(pid, mustExist).flatMap((child) => [child, ...descendants(child, false)]);
}

const dirs: string[] = [];
afterAll(async () => {
  for (const dir of dirs) await rm(dir, { recursive: true, force: true });
});

describe("embedded backend", () => {
  it("a provider handed an embedded backend provisions, inspects and destroys embedded profiles on it", async () => {
    const api = await startLocalSandboxApi();
    try {
      const provider = createVercelSandboxProvider({
        logger: { warn: () => undefined },
        embeddedBackend: async () => api,
        enroll: async ({ sandbox, enrollment }) => {
          const node = await sandbox.runCommand("node", ["--version"]);
          expect(node.exitCode).toBe(0);
          return enrollment.waitForDeviceId();
        },
      });
      const profile = { backend: "embedded", vcpus: 1 };
      const lease = await provider.provision(profile, operationId(), enrollingOptions());
      expect(await provider.inspect({ leaseId: lease.leaseId, profile })).toMatchObject({ status: "active" });
      await provider.destroy({ leaseId: lease.leaseId, profile });
      expect(await provider.inspect({ leaseId: lease.leaseId, profile })).toEqual({ status: "destroyed" });
      await provider.dispose();
      expect(api.requests().some((r) => r.method === "DELETE")).toBe(true);
    } finally {
      await api.close();
    }
  });

  it("the plugin starts nothing at registration, the emulator on first use, and its service stop ends it", async () => {
    const stateDir = await mkdtemp(join(tmpdir(), "embedded-state-"));
    dirs.push(stateDir);
    const before = new Set(descendants(process.pid));
    const { api, registered } = fakePluginApi({ scope: "embedded" }, stateDir);
    entry.register(api as never);
    const provider = registered.providers[0]!;
    expect(descendants(process.pid).filter((pid) => !before.has(pid))).toEqual([]);

    // The gateway stops while the node enrolls: the sandbox is kept (its processes run) until the service stops.
    const stopping = AbortSignal.abort(new Error("gateway is stopping"));
    const options = {
      ...enrollingOptions(),
      beginNodeEnrollment: async () => ({ ...fakeEnrollment(), signal: stopping }),
    };
    await expect(provider.provision({ backend: "embedded", vcpus: 1 }, operationId(), options)).rejects.toThrow();
    expect(descendants(process.pid).filter((pid) => !before.has(pid)).length).toBeGreaterThan(0);

    // As the gateway stops them: in the reverse order of registration (keepalives, then the emulator).
    for (const service of [...registered.services].reverse()) await service.stop();
    expect(descendants(process.pid).filter((pid) => !before.has(pid))).toEqual([]);
  });

  it("a provider given no embedded backend refuses embedded profiles permanently, naming the fix", async () => {
    const provider = createVercelSandboxProvider({ logger: { warn: () => undefined } });
    const error = await provider
      .provision({ backend: "embedded" }, operationId(), enrollingOptions())
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(WorkerProviderError);
    expect((error as Error).message).toContain("embeddedBackend");
  });
});
