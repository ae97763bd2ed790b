// Defects found in review (issue 11), each pinned against the emulator through the real SDK: keepalive that
// Vercel refuses, destroy racing provision, failures after a create committed, absence that takes a while to
// show, programming errors, maintenance messages, a damaged ledger, and operation ids of another format.
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { Sandbox } from "@vercel/sandbox";
import { type WorkerProfile, WorkerProviderError } from "openclaw/plugin-sdk/plugin-entry";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { enrollingOptions, operationId } from "../../src/conformance/fixtures.js";
import { type LocalSandboxApi, startLocalSandboxApi } from "../../src/emulator/index.js";
import { sandboxNameOf } from "../../src/provider/allocation.js";
import { createVercelSandboxProvider, type VercelSandboxProviderOptions } from "../../src/provider/index.js";

let api: LocalSandboxApi;
let profile: WorkerProfile;
const dirs: string[] = [];
const providers: Array<{ dispose(): Promise<void> }> = [];
const connection = () => ({ ...api.credentials, fetch: api.fetch });
const CREATE = /^\/v[23]\/sandboxes$/;
const quickProof = { budgetMs: 2_000, firstDelayMs: 10, maxDelayMs: 100 };

function makeProvider(options: Partial<VercelSandboxProviderOptions> = {}) {
  const provider = createVercelSandboxProvider({
    env: { RELIABILITY_TOKEN: api.credentials.token },
    logger: { warn: () => undefined },
    scope: "reliability",
    enroll: async ({ enrollment }) => enrollment.waitForDeviceId(),
    absenceProof: quickProof,
    ...options,
  });
  providers.push(provider);
  return provider;
}

async function waitFor(condition: () => boolean | Promise<boolean>, what: string) {
  for (let i = 0; i < 200; i += 1) {
    if (await condition()) return;
    await sleep(50);
  }
  throw new Error(`timed out waiting for ${what}`);
}

const exists = (name: string) =>
  Sandbox.get({ ...connection(), name }).then(
    () => true,
    (error: Error) => {
      if (/404/.test(error.message)) return false;
      throw error;
    },
  );

const requestsTo = (name: string, method: string) =>
  api.requests().filter((r) => r.method === method && r.path.endsWith(`/${name}`));

beforeAll(async () => {
  api = await startLocalSandboxApi();
  profile = {
    apiUrl: api.url,
    tokenEnv: "RELIABILITY_TOKEN",
    teamId: api.credentials.teamId,
    projectId: api.credentials.projectId,
    timeout: "2m",
  };
});
afterAll(async () => {
  for (const p of providers) await p.dispose();
  await api.close();
  for (const dir of dirs) await rm(dir, { recursive: true, force: true });
});

describe("keepalive", () => {
  it("an extension Vercel refuses for good ends the keepalive with a logged, redacted reason", async () => {
    const warnings: string[] = [];
    const provider = makeProvider({ keepaliveIntervalMs: 100, logger: { warn: (m) => warnings.push(m) } });
    const { leaseId } = await provider.provision(profile, operationId(), enrollingOptions());
    api.faults.inject({ method: "POST", path: "/extend-timeout", status: 403 });
    await waitFor(() => warnings.some((w) => w.includes(leaseId)), "a keepalive warning");
    const warning = warnings.find((w) => w.includes(leaseId)) ?? "";
    expect(warning).toContain("403");
    expect(warning).not.toContain(api.credentials.token);
    expect(provider.keepaliveLeases()).not.toContain(leaseId);
    await provider.destroy({ leaseId, profile });
  });

  it("destroy while provision is enrolling leaves no keepalive behind", async () => {
    let enrolled: () => void = () => undefined;
    const gate = new Promise<void>((resolve) => {
      enrolled = resolve;
    });
    let enrolling = false;
    const provider = makeProvider({
      keepaliveIntervalMs: 100,
      enroll: async ({ enrollment }) => {
        enrolling = true;
        await gate;
        return enrollment.waitForDeviceId();
      },
    });
    const op = operationId();
    const { leaseId } = await provider.resolveAllocation(profile, op);
    const provisioned = provider.provision(profile, op, enrollingOptions());
    await waitFor(() => enrolling, "enrollment to start");
    const destroyed = provider.destroy({ leaseId, profile });
    enrolled();
    await provisioned;
    await destroyed;
    expect(provider.keepaliveLeases()).not.toContain(leaseId);
    expect(await exists(sandboxNameOf(leaseId))).toBe(false);
  });
});

describe("provision after a create that committed", () => {
  it("a failed adopt releases the sandbox the lost create made", async () => {
    const provider = makeProvider();
    const op = operationId();
    const name = sandboxNameOf((await provider.resolveAllocation(profile, op)).leaseId);
    api.faults.inject({ method: "POST", path: CREATE, dropAfterCommit: true });
    api.faults.inject({ method: "GET", path: name, status: 403 });
    const error = await provider.provision(profile, op, enrollingOptions()).catch((e: unknown) => e);
    expect((error as Error).message).toContain("403");
    expect(WorkerProviderError.isCleanupIndeterminate(error)).toBe(false);
    expect(await exists(name)).toBe(false);
  });

  it("a failed adopt whose release cannot be proven reports cleanup as indeterminate", async () => {
    const provider = makeProvider();
    const op = operationId();
    const { leaseId } = await provider.resolveAllocation(profile, op);
    const name = sandboxNameOf(leaseId);
    api.faults.inject({ method: "POST", path: CREATE, dropAfterCommit: true });
    api.faults.inject({ method: "GET", path: name, status: 403 });
    api.faults.inject({ method: "DELETE", path: name, status: 403 });
    const error = await provider.provision(profile, op, enrollingOptions()).catch((e: unknown) => e);
    expect(WorkerProviderError.isCleanupIndeterminate(error)).toBe(true);
    await provider.destroy({ leaseId, profile });
    expect(await exists(name)).toBe(false);
  });

  it("an abort while adopting still releases the sandbox", async () => {
    const controller = new AbortController();
    const provider = makeProvider({
      fetch: async (input, init) => {
        const response = await api.fetch(input, init);
        if (init?.method === "POST" && response.status === 409) controller.abort(new Error("operator stopped it"));
        return response;
      },
    });
    const op = operationId();
    const name = sandboxNameOf((await provider.resolveAllocation(profile, op)).leaseId);
    api.faults.inject({ method: "POST", path: CREATE, dropAfterCommit: true });
    await expect(provider.provision(profile, op, enrollingOptions({ signal: controller.signal }))).rejects.toThrow();
    expect(await exists(name)).toBe(false);
  });
});

describe("release proves absence", () => {
  /** A reader that still sees the sandbox for `staleReads` lookups after its delete, as a lagging replica would. */
  function laggingFetch(staleReads: number): typeof fetch {
    const last = new Map<string, string>();
    let stale = 0;
    return async (input, init) => {
      const url = new URL(typeof input === "string" || input instanceof URL ? input : input.url);
      const method = init?.method ?? "GET";
      const name = /\/v2\/sandboxes\/(openclaw-[0-9a-f]+)$/.exec(url.pathname)?.[1];
      if (name && method === "GET" && stale > 0 && last.has(name)) {
        stale -= 1;
        return new Response(last.get(name), { status: 200, headers: { "content-type": "application/json" } });
      }
      const response = await api.fetch(input, init);
      if (name && method === "GET" && response.status === 200) last.set(name, await response.clone().text());
      if (name && method === "DELETE" && response.ok) stale = staleReads;
      return response;
    };
  }

  it("looks again until a lagging API stops showing the deleted sandbox", async () => {
    const provider = makeProvider({ fetch: laggingFetch(3) });
    const { leaseId } = await provider.provision(profile, operationId(), enrollingOptions());
    await provider.destroy({ leaseId, profile });
    expect(await exists(sandboxNameOf(leaseId))).toBe(false);
  });

  it("gives up within its bound and says release is not proven", async () => {
    const provider = makeProvider({
      fetch: laggingFetch(Number.POSITIVE_INFINITY),
      absenceProof: { budgetMs: 200, firstDelayMs: 10, maxDelayMs: 50 },
    });
    const { leaseId } = await provider.provision(profile, operationId(), enrollingOptions());
    await expect(provider.destroy({ leaseId, profile })).rejects.toThrow(/not proven/);
  });
});

describe("errors", () => {
  it("a programming error in the transport is neither retried as a lookup nor answered by adopt polling", async () => {
    const provider = makeProvider({
      fetch: async (input, init) => {
        if (init?.method === "POST") throw new TypeError("body.getReader is not a function");
        return api.fetch(input, init);
      },
    });
    const op = operationId();
    const name = sandboxNameOf((await provider.resolveAllocation(profile, op)).leaseId);
    await expect(provider.provision(profile, op, enrollingOptions())).rejects.toThrow(/getReader/);
    expect(requestsTo(name, "GET")).toEqual([]);
  });

  it("maintenance errors leave the provider redacted", async () => {
    let failing = false;
    const provider = makeProvider({
      retainedSnapshots: async () => {
        if (failing) throw new Error(`warm image store rejected credential ${api.credentials.token}`);
        return new Set();
      },
    });
    const op = operationId();
    const { leaseId } = await provider.provision(profile, op, enrollingOptions());
    await provider.destroy({ leaseId, profile });
    // A late replay in another gateway process re-creates the destroyed lease's sandbox.
    await makeProvider().provision(profile, op, enrollingOptions());
    failing = true;
    const error = await provider
      .maintain?.({ profiles: [profile], signal: new AbortController().signal, assertCurrent: () => undefined })
      .catch((e: unknown) => e);
    expect((error as Error).message).toContain("warm image store rejected credential [redacted]");
    expect((error as Error).message).not.toContain(api.credentials.token);
    expect((error as Error).cause).toBeUndefined();
  });
});

describe("state and identity", () => {
  it("a damaged lease ledger is reported once and never fails a destroy", async () => {
    const stateDir = await mkdtemp(join(tmpdir(), "reliability-state-"));
    dirs.push(stateDir);
    const { leaseId } = await makeProvider({ stateDir }).provision(profile, operationId(), enrollingOptions());
    await mkdir(join(stateDir, "vercel-sandbox"), { recursive: true });
    await writeFile(join(stateDir, "vercel-sandbox", "leases.json"), '{"version":1,"tombstones":');
    const warnings: string[] = [];
    const restarted = makeProvider({ stateDir, logger: { warn: (m) => warnings.push(m) } });
    await restarted.destroy({ leaseId, profile });
    expect(await restarted.inspect({ leaseId, profile })).toEqual({ status: "destroyed" });
    expect(await exists(sandboxNameOf(leaseId))).toBe(false);
    expect(warnings.filter((w) => w.includes("damaged"))).toHaveLength(1);
  });

  it("an operation id in a format this version has never seen still provisions one adoptable sandbox", async () => {
    const op = "provision:v3/region-7/2f9c";
    const provider = makeProvider();
    const { leaseId } = await provider.provision(profile, op, enrollingOptions());
    expect((await makeProvider().provision(profile, op, enrollingOptions())).leaseId).toBe(leaseId);
    const sandbox = await Sandbox.get({ ...connection(), name: sandboxNameOf(leaseId) });
    expect(sandbox.tags?.["openclaw-op"]).toMatch(/^[0-9a-f]{16}$/);
    await provider.destroy({ leaseId, profile });
  });
});
