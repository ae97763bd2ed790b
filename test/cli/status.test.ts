// What the CLI makes of the gateway's answers and Vercel's listings: our environments out of environments.list,
// the gateway view when it does not answer, the status join and its table, and the gateway method's idle view.
import { describe, expect, it } from "vitest";
import { ourEnvironments, readGateway } from "../../src/cli/gateway.js";
import type { Listing } from "../../src/cli/sandboxes.js";
import { buildStatus, renderStatus } from "../../src/cli/status.js";
import { gatewayStatus, STATUS_METHOD } from "../../src/gateway-status/method.js";
import { parseSettings } from "../../src/settings/profile.js";
import { IdleClock } from "../../src/suspend/clock.js";
import { VercelClient } from "../../src/vercel/client.js";

const A = "vsb_aaaaaaaaaaaaaaaaaaaaaaaa";
const B = "vsb_bbbbbbbbbbbbbbbbbbbbbbbb";
const C = "vsb_cccccccccccccccccccccccc";
const nameOf = (lease: string) => lease.replace("vsb_", "openclaw-");

/** A real project handle; building one makes no request. */
async function project() {
  const client = new VercelClient({ credentials: { token: "t", teamId: "team_x", projectId: "prj_x" } });
  return client.project(parseSettings({}));
}

const environmentsPayload = {
  environments: [
    { id: "env-1", worker: { providerId: "vercel-sandbox", leaseId: A, state: "ready" } },
    { id: "env-2", worker: { providerId: "vercel-sandbox", state: "provisioning" } },
    { id: "env-3", worker: { providerId: "crabbox", leaseId: "cbx_1", state: "ready" } },
    { id: "env-4", worker: { providerId: "vercel-sandbox", leaseId: C, state: "destroyed" } },
    { id: "local" },
  ],
};

describe("ourEnvironments", () => {
  it("keeps this provider's worker environments with their lease, state and error", () => {
    expect(ourEnvironments(environmentsPayload)).toEqual([
      { environmentId: "env-1", leaseId: A, state: "ready" },
      { environmentId: "env-2", state: "provisioning" },
      { environmentId: "env-4", leaseId: C, state: "destroyed" },
    ]);
    expect(ourEnvironments({ nope: 1 })).toEqual([]);
  });
});

describe("readGateway", () => {
  it("an unreachable gateway is a result with the way to start or reach it", async () => {
    const view = await readGateway(async () => {
      throw new Error("gateway closed (1006)");
    });
    expect(view).toEqual({
      reachable: false,
      error: "the gateway did not answer environments.list: gateway closed (1006)",
      remedy: expect.stringContaining("openclaw gateway run"),
    });
  });

  it("a gateway without this plugin's status method is reachable, with a restart hint", async () => {
    const view = await readGateway(async (method) => {
      if (method === STATUS_METHOD) throw new Error(`unknown method: ${method}`);
      return environmentsPayload;
    });
    expect(view.reachable && view.status).toBeNull();
    expect(view.reachable && view.statusError).toMatch(/restart it/);
  });
});

describe("buildStatus", () => {
  it("joins environments, Vercel listings, tombstones and the keepalive per lease", async () => {
    const gateway = await readGateway(async (method) =>
      method === STATUS_METHOD ? gatewayStatus({ keepaliveLeases: () => [A] }) : environmentsPayload,
    );
    const listing: Listing = {
      profileId: "vsb",
      scope: "s",
      state: "listed",
      project: await project(),
      sandboxes: [
        { name: nameOf(A), status: "running", tags: {} },
        { name: nameOf(B), status: "stopped", tags: {} },
      ],
    };
    const tombstones = new Map([[B, { sandboxName: nameOf(B), destroyedAt: 42 }]]);
    const report = buildStatus(gateway, [listing], tombstones);
    expect(report.leases).toEqual([
      {
        leaseId: A,
        sandboxName: nameOf(A),
        profile: "vsb",
        environmentId: "env-1",
        workerState: "ready",
        vercel: "running",
        keepalive: true,
        destroyedAt: null,
        sessions: [],
        counted: null,
      },
      {
        leaseId: null,
        sandboxName: null,
        profile: null,
        environmentId: "env-2",
        workerState: "provisioning",
        vercel: "unknown",
        keepalive: null,
        destroyedAt: null,
        sessions: [],
        counted: null,
      },
      {
        leaseId: B,
        sandboxName: nameOf(B),
        profile: "vsb",
        environmentId: null,
        workerState: null,
        vercel: "stopped",
        keepalive: false,
        destroyedAt: 42,
        sessions: [],
        counted: null,
      },
    ]);
    expect(report.profiles).toEqual([{ id: "vsb", scope: "s", sandboxes: 2, note: null }]);
    const text = renderStatus(report);
    expect(text).toMatch(/^vsb_a+\s+vsb\s+env-1\s+ready\s+running\s+on\s+-\s+-$/m);
    expect(text).toMatch(/^vsb_b+\s+vsb\s+-\s+destroyed\s+stopped\s+off\s+-\s+-$/m);
    expect(text).toContain("idle clock: not running (no `suspend` block in the plugin config)");
  });

  it("shows the worker cap, the leases it counts (a reservation without a sandbox too) and the sessions holding each", async () => {
    const environments = {
      environments: [
        {
          id: "env-1",
          worker: { providerId: "vercel-sandbox", leaseId: A, state: "attached", attachedSessionIds: ["s-1"] },
        },
      ],
    };
    const cap = {
      maxWorkers: 2,
      counted: [
        { leaseId: A, phase: "live" as const, sinceMs: 1 },
        { leaseId: B, phase: "reserved" as const, sinceMs: 2 },
      ],
    };
    const gateway = await readGateway(async (method) =>
      method === STATUS_METHOD ? gatewayStatus({ keepaliveLeases: () => [A], cap: () => cap }) : environments,
    );
    const listing: Listing = {
      profileId: "vsb",
      scope: "s",
      state: "listed",
      project: await project(),
      sandboxes: [{ name: nameOf(A), status: "running", tags: {} }],
    };
    const report = buildStatus(gateway, [listing], new Map());
    expect(report.cap).toEqual({ maxWorkers: 2, counted: 2 });
    expect(report.leases.map((r) => [r.leaseId, r.counted, r.sessions])).toEqual([
      [A, "live", ["s-1"]],
      [B, "reserved", []],
    ]);
    const text = renderStatus(report);
    expect(text).toContain("worker cap: maxWorkers 2 · 2 counted");
    expect(text).toMatch(/^vsb_a+\s+vsb\s+env-1\s+attached\s+running\s+on\s+live\s+s-1$/m);
  });

  it("a lease no successful listing found is unknown while a listing failed, absent when all succeeded", async () => {
    const gateway = await readGateway(async (method) =>
      method === STATUS_METHOD ? gatewayStatus({ keepaliveLeases: () => [] }) : environmentsPayload,
    );
    const failed: Listing = { profileId: "b", scope: "s", state: "failed", error: "boom", remedy: "do x" };
    const listed: Listing = { profileId: "a", scope: "s", state: "listed", project: await project(), sandboxes: [] };
    expect(buildStatus(gateway, [listed, failed], new Map()).leases[0]?.vercel).toBe("unknown");
    expect(buildStatus(gateway, [listed], new Map()).leases[0]?.vercel).toBe("absent");
    expect(buildStatus(gateway, [listed, failed], new Map()).profiles[1]?.note).toBe("boom. do x");
  });

  it("without the gateway there are no environments, the keepalive is unknown, and the table says why", async () => {
    const gateway = await readGateway(async () => {
      throw new Error("connect ECONNREFUSED 127.0.0.1:18789");
    });
    const listing: Listing = {
      profileId: "vsb",
      scope: "s",
      state: "listed",
      project: await project(),
      sandboxes: [{ name: nameOf(A), status: "running", tags: {} }],
    };
    const report = buildStatus(gateway, [listing], new Map());
    expect(report.leases).toEqual([expect.objectContaining({ leaseId: A, keepalive: null, workerState: null })]);
    expect(renderStatus(report)).toMatch(/Gateway: not reachable — .*ECONNREFUSED[\s\S]*→ Start the gateway/);
  });
});

describe("gatewayStatus (the gateway method's answer)", () => {
  it("reports the idle clock, a fence after a failed turn, the deadline and why sleep is due", () => {
    let now = 1_000_000;
    const clock = new IdleClock(() => now);
    clock.turnStarted("run-1");
    now += 5_000;
    clock.turnEnded("run-1", true);
    now += 60_000;
    const policy = { idleMs: 45 * 60_000, deadlineMarginMs: 5 * 60_000, deadlineAtMs: 1_000_000 + 45 * 60_000 };
    const status = gatewayStatus({ keepaliveLeases: () => [B, A], idle: () => ({ clock: clock.snapshot(), policy }) });
    expect(status).toEqual({
      version: 1,
      keepalive: [A, B],
      idle: {
        nowMs: 1_065_000,
        startedAtMs: 1_000_000,
        lastActivityMs: 1_005_000,
        idleMs: 60_000,
        idleAfterMs: 45 * 60_000,
        activeTurns: 0,
        activeModelCalls: 0,
        activeProvisions: 0,
        fence: { sinceMs: 1_005_000 },
        deadlineAtMs: 1_000_000 + 45 * 60_000,
        deadlineMarginMs: 5 * 60_000,
        due: "fenced",
      },
    });
  });
});
