// The environment `images warm` has the gateway create (src/cli/warm-environment.ts), against a scripted gateway
// that answers core's environments.create / list / destroy the way the cases need (the real provider behind
// core's methods runs in warm.test.ts, the real gateway in test/gateway/cli.test.ts). What the command leaves
// behind is always said, and never hides why it failed.
import { describe, expect, it } from "vitest";
import type { GatewayCall } from "../../src/cli/gateway.js";
import { withWorkerEnvironment } from "../../src/cli/warm-environment.js";

const timings = { readyTimeoutMs: 2_000, destroyTimeoutMs: 500, pollMs: 10 };
const env = (id: string, state: string, error?: string) => ({
  id,
  worker: { providerId: "vercel-sandbox", leaseId: `l-${id}`, state, ...(error ? { error } : {}) },
});

interface Script {
  create: (list: Array<ReturnType<typeof env>>, signal?: AbortSignal) => Promise<unknown>;
  destroy?: (id: string) => Promise<void>;
}

function gateway(script: Script) {
  const list: Array<ReturnType<typeof env>> = [];
  const destroyed: string[] = [];
  const call: GatewayCall = async (method, params, options = {}) => {
    if (method === "environments.list") return { environments: structuredClone(list) };
    if (method === "environments.create") return script.create(list, options.signal);
    if (method === "environments.destroy") {
      const id = (params as { environmentId: string }).environmentId;
      await script.destroy?.(id);
      destroyed.push(id);
      list.splice(
        list.findIndex((e) => e.id === id),
        1,
      );
      return {};
    }
    throw new Error(`unknown method ${method}`);
  };
  return { call, list, destroyed };
}

const run = (call: GatewayCall, signal = new AbortController().signal, lines: string[] = []) =>
  withWorkerEnvironment(
    { call, profileId: "spec", progress: (l) => lines.push(l), signal },
    timings,
    async () => "used",
  );

describe("the worker environment of images warm", () => {
  it("a destroy that fails after a failed provision keeps the provision's failure and names the environment left", async () => {
    const g = gateway({
      create: async (list) => {
        list.push(env("env-1", "failed"));
        throw new Error("provision failed: quota");
      },
      destroy: async () => {
        throw new Error("gateway busy");
      },
    });
    const failure = await run(g.call).catch((error: Error & { remedy?: string }) => error);
    expect(failure).toBeInstanceOf(Error);
    expect((failure as Error).message).toMatch(/did not become ready: provision failed: quota/);
    expect((failure as Error).message).toMatch(/environment env-1 was not destroyed: gateway busy/);
    expect((failure as { remedy?: string }).remedy).toMatch(/environments\.destroy/);
  });

  it("core's generic failure of environments.create is followed by the error its record of the environment holds", async () => {
    const g = gateway({
      create: async (list) => {
        list.push(env("env-1", "failed", "quota exceeded"));
        throw new Error("worker environment creation failed");
      },
    });
    const failure = (await run(g.call).catch((error: Error) => error)) as Error;
    expect(failure.message).toBe(
      "the gateway's worker for the base image did not become ready: worker environment creation failed " +
        "(environment env-1 failed: quota exceeded)",
    );
    expect(g.destroyed).toEqual(["env-1"]);
  });

  it("an answer without an environment id is refused by name, and the new environment is still destroyed", async () => {
    const g = gateway({
      create: async (list) => {
        list.push(env("env-1", "ready"));
        return { ok: true };
      },
    });
    await expect(run(g.call)).rejects.toThrow(/answered environments\.create without an environment id/);
    expect(g.destroyed).toEqual(["env-1"]);
  });

  it("interrupted while two new environments are listed: destroys neither, and says which may be its own", async () => {
    const abort = new AbortController();
    const g = gateway({
      create: (list, signal) => {
        list.push(env("env-1", "provisioning"), env("env-2", "provisioning"));
        return new Promise((_, reject) => signal?.addEventListener("abort", () => reject(signal.reason)));
      },
    });
    setTimeout(() => abort.abort(new Error("interrupted (Ctrl-C)")), 50);
    const failure = (await run(g.call, abort.signal).catch((error: Error) => error)) as Error;
    expect(failure.message).toMatch(/^interrupted \(Ctrl-C\); and this run's environment, one of env-1, env-2/);
    expect(failure.message).toMatch(/was not destroyed/);
    expect(g.destroyed).toEqual([]);
  });

  it("a ready environment is used, then destroyed, and the use's answer returned", async () => {
    const lines: string[] = [];
    const g = gateway({
      create: async (list) => {
        list.push(env("env-1", "ready"));
        return { id: "env-1" };
      },
    });
    expect(await run(g.call, undefined, lines)).toBe("used");
    expect(g.destroyed).toEqual(["env-1"]);
    expect(lines.at(-1)).toMatch(/^environment env-1 destroyed/);
  });
});
