// Issue 12, the CLI: `openclaw vercel-sandbox …` as the installed openclaw@2026.9.2 runs it, with the packed
// plugin installed into an isolated state dir and a profile on the emulator. The commands run in the CLI
// process; status, gc and images warm reach the running gateway through its RPCs. One gateway serves the file,
// bound to a TLS test host. images warm's build on a real worker is specified in images-warm.test.ts.
import { Sandbox } from "@vercel/sandbox";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type LocalSandboxApi, startLocalSandboxApi } from "../../src/emulator/index.js";
import { ImageStore } from "../../src/preparation/store.js";
import { LeaseLedger } from "../../src/provider/ledger.js";
import { emulatorSettings, TOKEN_ENV } from "./environments.js";
import { GatewayHarness, parseCliJson } from "./harness.js";
import { TestHost } from "./test-host.js";

const PROFILE = "vsb";
const SCOPE = "cli-test";
/**
 * Sandboxes of our scope: one of a lease no environment holds, one not named as a lease. (A sandbox of a lease
 * the ledger buried is released by the gateway's own maintenance pass at startup; gc's tombstone rule is
 * specified in test/cli/gc.test.ts.)
 */
const UNOWNED = "openclaw-aaaaaaaaaaaaaaaaaaaaaaaa";
const FOREIGN = "scratch-of-someone";

let harness: GatewayHarness | undefined;
let api: LocalSandboxApi | undefined;
let host: TestHost | undefined;

function gw(): GatewayHarness {
  if (!harness) throw new Error("gateway harness was not created (see beforeAll)");
  return harness;
}
function emulator(): LocalSandboxApi {
  if (!api) throw new Error("emulator was not started (see beforeAll)");
  return api;
}

/** `openclaw vercel-sandbox <args>` with the Vercel token in this CLI process's environment only. */
function vsb(args: string[], timeoutMs = 120_000) {
  return gw().oc(["vercel-sandbox", ...args], {
    timeoutMs,
    env: { [TOKEN_ENV]: emulator().credentials.token },
  });
}

async function sandboxNames(): Promise<string[]> {
  const list = await (await Sandbox.list({ ...emulator().credentials, fetch: emulator().fetch })).toArray();
  return list.map((s) => s.name).sort();
}

interface Check {
  id: string;
  subject?: string;
  status: string;
  message: string;
  remedy?: string;
}

beforeAll(async () => {
  harness = await GatewayHarness.create();
  api = await startLocalSandboxApi();
  host = await TestHost.create();
  await harness.installPlugin(await harness.packPlugin());
  const settings = { ...emulatorSettings(api), scope: SCOPE };
  await harness.patchConfig({ cloudWorkers: { profiles: { [PROFILE]: { provider: "vercel-sandbox", settings } } } });
}, 600_000);

afterAll(async () => {
  try {
    await harness?.dispose();
  } finally {
    try {
      await api?.close();
    } finally {
      await host?.dispose();
    }
  }
}, 180_000);

describe("openclaw vercel-sandbox (real gateway CLI)", () => {
  it("doctor --json on a loopback-only gateway fails the enrollment origin, names gateway.publicOrigin, never prints the token", {
    timeout: 240_000,
  }, async () => {
    const result = await vsb(["doctor", "--json"]);
    expect(result.code, gw().describeFailure("doctor", result)).toBe(1);
    const report = parseCliJson<{ ok: boolean; status: string; checks: Check[] }>(result.stdout);
    expect(report).toMatchObject({ ok: false, status: "fail" });
    const byId = (id: string) => report?.checks.find((c) => c.id === id);
    expect(byId("node")?.status).toBe("ok");
    expect(byId("settings")).toMatchObject({ subject: PROFILE, status: "ok" });
    expect(byId("credentials")).toMatchObject({ subject: PROFILE, status: "ok" });
    expect(byId("credentials")?.message).toContain(`$${TOKEN_ENV}`);
    expect(byId("vercel")).toMatchObject({ subject: PROFILE, status: "ok" });
    const origin = byId("enrollment-origin");
    expect(origin).toMatchObject({ status: "fail" });
    expect(origin?.message).toMatch(/loopback/);
    expect(origin?.remedy).toMatch(/gateway\.publicOrigin/);
    expect(byId("gateway")).toMatchObject({ status: "warn" });
    expect(byId("gateway")?.remedy).toMatch(/openclaw gateway run/);
    expect(result.stdout + result.stderr).not.toContain(emulator().credentials.token);
  });

  it("doctor (table) passes the origin once gateway.publicOrigin is set, and says what to do next for the rest", {
    timeout: 240_000,
  }, async () => {
    await gw().patchConfig({ gateway: { publicOrigin: "https://gw.test.invalid" } });
    const result = await vsb(["doctor"]);
    expect(result.code, gw().describeFailure("doctor", result)).toBe(0);
    expect(result.stdout).toMatch(/^ok\s+enrollment-origin\s+workers enroll through https:\/\/gw\.test\.invalid/m);
    expect(result.stdout).toMatch(/^WARN\s+gateway\s+/m);
    expect(result.stdout).toContain("What to do next:");
    expect(result.stdout).toContain("Doctor: no failures, some warnings.");
    // Root help knows the command from the plugin's CLI registration (read in OpenClaw's cli-metadata pass).
    const help = await gw().ocOk(["--help"], { timeoutMs: 120_000 });
    expect(help.stdout).toMatch(/^\s+vercel-sandbox\b.*Inspect and tidy Vercel Sandbox workers/m);
    const own = await vsb(["--help"]);
    for (const command of ["status", "images", "gc", "doctor"])
      expect(own.stdout).toMatch(new RegExp(`^\\s+${command}\\b`, "m"));
  });

  it("images warm is registered: an unknown profile is refused by name; without a running gateway it says to start one", {
    timeout: 240_000,
  }, async () => {
    const unknown = await vsb(["images", "warm", "--worker-profile", "nope"]);
    expect(unknown.code, gw().describeFailure("images warm", unknown)).toBe(1);
    expect(unknown.stderr).toMatch(/no cloudWorkers profile "nope" uses provider vercel-sandbox/);
    const known = await vsb(["images", "warm", "--worker-profile", PROFILE, "--json"]);
    expect(known.code, gw().describeFailure("images warm", known)).toBe(1);
    const refused = parseCliJson<{ error: { message: string; remedy: string } }>(known.stdout)?.error;
    expect(refused?.message).toMatch(/^the gateway did not answer environments\.list/);
    expect(refused?.remedy).toMatch(/openclaw gateway run/);
    expect(await sandboxNames()).toEqual([]);
  });

  describe("with the gateway running", () => {
    beforeAll(async () => {
      const target = emulator();
      const connection = { ...target.credentials, fetch: target.fetch, runtime: "node24" as const };
      for (const name of [UNOWNED, FOREIGN]) {
        await Sandbox.create({ ...connection, name, tags: { "openclaw-scope": SCOPE } });
      }
      // Bound to the test host with its certificate; the origin the doctor case set would send workers elsewhere.
      await gw().patchConfig({ gateway: { ...(host as TestHost).gatewayConfig(), publicOrigin: null } });
      await gw().startGateway({
        bind: "custom",
        tlsCertPem: (host as TestHost).certPem,
        env: { [TOKEN_ENV]: target.credentials.token },
        secrets: [target.credentials.token],
      });
    }, 300_000);

    it("status --json joins Vercel, the ledger and the gateway's keepalive", { timeout: 240_000 }, async () => {
      const result = await vsb(["status", "--json"]);
      expect(result.code, gw().describeFailure("status", result)).toBe(0);
      // stdout is the JSON document alone: plugin and gateway logs go to stderr.
      const report = JSON.parse(result.stdout) as {
        gateway: { reachable: boolean; idle: unknown };
        profiles: Array<{ id: string; scope: string; sandboxes: number }>;
        leases: Array<Record<string, unknown>>;
      };
      expect(report?.gateway).toMatchObject({ reachable: true, idle: null });
      expect(report?.profiles).toEqual([{ id: PROFILE, scope: SCOPE, sandboxes: 2, note: null }]);
      expect(report?.leases).toEqual([
        {
          leaseId: "vsb_aaaaaaaaaaaaaaaaaaaaaaaa",
          sandboxName: UNOWNED,
          profile: PROFILE,
          environmentId: null,
          workerState: null,
          vercel: "running",
          keepalive: false,
          destroyedAt: null,
          counted: null, // no profile sets maxWorkers: the cap counts nothing
          sessions: [],
        },
      ]);
      const table = await vsb(["status"]);
      expect(table.stdout).toMatch(/^Gateway: reachable$/m);
      expect(table.stdout).toMatch(/^vsb_a{24}\s+vsb\s+-\s+none\s+running\s+off\s+-\s+-$/m);
    });

    it("gc --dry-run --json removes nothing; gc --json removes the unowned lease's sandbox with proof and keeps the foreign one", {
      timeout: 300_000,
    }, async () => {
      const dry = await vsb(["gc", "--dry-run", "--json"]);
      expect(dry.code, gw().describeFailure("gc --dry-run", dry)).toBe(0);
      const planned = parseCliJson<{ dryRun: boolean; removed: Array<{ sandboxName: string }>; kept: unknown[] }>(
        dry.stdout,
      );
      expect(planned?.dryRun).toBe(true);
      expect(planned?.removed.map((r) => r.sandboxName)).toEqual([UNOWNED]);
      expect(await sandboxNames()).toEqual([UNOWNED, FOREIGN].sort());

      const real = await vsb(["gc", "--json"]);
      expect(real.code, gw().describeFailure("gc", real)).toBe(0);
      const done = parseCliJson<{
        removed: Array<{ sandboxName: string; reason: string }>;
        kept: Array<{ sandboxName: string; reason: string }>;
        failed: unknown[];
      }>(real.stdout);
      expect(done?.failed).toEqual([]);
      expect(done?.removed).toEqual([
        expect.objectContaining({
          sandboxName: UNOWNED,
          reason: "no environment of the running gateway holds this lease",
        }),
      ]);
      expect(done?.kept).toEqual([expect.objectContaining({ sandboxName: FOREIGN })]);
      expect(await sandboxNames()).toEqual([FOREIGN]);
      const tombstone = await LeaseLedger.inDirectory(gw().stateDir).tombstone("vsb_aaaaaaaaaaaaaaaaaaaaaaaa");
      expect(tombstone?.provenAbsentAt).toBeGreaterThan(0);
    });

    it("images --json lists the store's warm images and preparation diagnostics", { timeout: 240_000 }, async () => {
      const store = ImageStore.inDirectory(gw().stateDir);
      const image = {
        snapshotId: "snap_cli_test",
        key: "k".repeat(64),
        profileKey: "p".repeat(64),
        projectKey: "project",
        baseCommit: "c".repeat(40),
        recipeIdentity: "r1",
        recipeSource: "script" as const,
        sourceLeaseId: "vsb_cccccccccccccccccccccccc",
        createdAt: 1_700_000_000_000,
        lastUsedAt: 1_700_000_000_000,
        state: "ready" as const,
      };
      await store.recordImage(image);
      const result = await vsb(["images", "--json"]);
      expect(result.code, gw().describeFailure("images", result)).toBe(0);
      expect(parseCliJson(result.stdout)).toEqual({ images: [image], diagnostics: [] });
      const table = await vsb(["images"]);
      expect(table.stdout).toMatch(/^snap_cli_test\s+project\s+kkkkkkkkkkkk\s+script\s+cccccccccccc\s/m);
    });
  });
});
