// The entry's register() against a stand-in for the gateway's plugin API (the host's object, not ours).
import { describe, expect, it } from "vitest";
import entry from "../../src/index.js";
import { fakePluginApi as fakeApi } from "../provider/plugin-api.js";

describe("plugin entry", () => {
  it("registers the vercel-sandbox provider, a service that disposes it and one that stops the emulator, without I/O", async () => {
    const { api, registered } = fakeApi();
    entry.register(api as never);
    expect(entry.id).toBe("vercel-sandbox");
    expect(registered.providers).toHaveLength(1);
    const provider = registered.providers[0]!;
    expect(provider.id).toBe("vercel-sandbox");
    expect(provider.supportedExecutionModes).toEqual(["worker-turn", "remote-exec"]);
    expect(registered.services.map((s) => s.id)).toEqual(["vercel-sandbox-emulator", "vercel-sandbox-keepalive"]);
    // OpenClaw stops services in the reverse order of registration.
    for (const service of [...registered.services].reverse()) await expect(service.stop()).resolves.toBeUndefined();
  });

  it("derives a stable gateway scope from the state dir unless configured", async () => {
    const op = `provision:v2:${"1".repeat(64)}`;
    const leaseFor = async (config: Record<string, unknown>) => {
      const { api, registered } = fakeApi(config);
      entry.register(api as never);
      return (await registered.providers[0]!.resolveAllocation({}, op)).leaseId;
    };
    expect(await leaseFor({})).toBe(await leaseFor({}));
    expect(await leaseFor({ scope: "team-a" })).not.toBe(await leaseFor({}));
  });

  it("warns about invalid plugin config instead of failing registration", () => {
    const { api, registered } = fakeApi({ scope: "Not Valid" });
    entry.register(api as never);
    expect(registered.warnings.join()).toContain("plugin config is invalid");
  });
});
