// gc's proof rules and its removal, against the emulator through the real SDK and a real ledger: a sandbox is
// removed only when the ledger says its lease was destroyed, or the gateway answered, holds no environment
// with that lease and has none still provisioning without a lease id. Everything else is kept with the reason.
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Sandbox } from "@vercel/sandbox";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type GatewayCall, type GatewayView, readGateway } from "../../src/cli/gateway.js";
import { planGc, renderGc, runGc } from "../../src/cli/gc.js";
import { observe } from "../../src/cli/observe.js";
import { vercelProfiles } from "../../src/cli/profiles.js";
import { listProfiles } from "../../src/cli/sandboxes.js";
import { type LocalSandboxApi, startLocalSandboxApi } from "../../src/emulator/index.js";
import { ImageStore } from "../../src/preparation/store.js";
import { LeaseLedger } from "../../src/provider/ledger.js";
import { VercelClient } from "../../src/vercel/client.js";

const SCOPE = "gc-test";
const HELD = "vsb_111111111111111111111111";
const BURIED = "vsb_222222222222222222222222";
const LOOSE = "vsb_333333333333333333333333";
const nameOf = (lease: string) => lease.replace("vsb_", "openclaw-");
const quickProof = { budgetMs: 3_000, firstDelayMs: 20, maxDelayMs: 200 };

let api: LocalSandboxApi;
let stateDir: string;

const gatewayWith = (environments: unknown[]): Promise<GatewayView> =>
  readGateway(async (method) => (method === "environments.list" ? { environments } : { version: 1, keepalive: [] }));
const unreachable = () =>
  readGateway(async () => {
    throw new Error("connect ECONNREFUSED");
  });
const worker = (id: string, state: string, leaseId?: string) => ({
  id,
  worker: { providerId: "vercel-sandbox", state, ...(leaseId ? { leaseId } : {}) },
});

function profilesFor(token: string, fetch?: typeof globalThis.fetch) {
  const settings = {
    apiUrl: api.url,
    tokenEnv: "GC_TOKEN",
    teamId: api.credentials.teamId,
    projectId: api.credentials.projectId,
  };
  const profiles = vercelProfiles(
    { cloudWorkers: { profiles: { vsb: { provider: "vercel-sandbox", settings } } } },
    SCOPE,
  );
  return { profiles, client: new VercelClient({ env: { GC_TOKEN: token }, ...(fetch ? { fetch } : {}) }) };
}

async function names(): Promise<string[]> {
  return (await (await Sandbox.list({ ...api.credentials, fetch: api.fetch })).toArray()).map((s) => s.name).sort();
}

beforeAll(async () => {
  api = await startLocalSandboxApi();
  stateDir = await mkdtemp(join(tmpdir(), "vsb-cli-gc-"));
  for (const name of [nameOf(HELD), nameOf(BURIED), nameOf(LOOSE), "someone-else"]) {
    await Sandbox.create({
      ...api.credentials,
      fetch: api.fetch,
      name,
      runtime: "node24",
      tags: { "openclaw-scope": SCOPE },
    });
  }
  await Sandbox.create({
    ...api.credentials,
    fetch: api.fetch,
    name: nameOf("vsb_444444444444444444444444"),
    runtime: "node24",
    tags: { "openclaw-scope": "other" },
  });
  await LeaseLedger.inDirectory(stateDir).bury(BURIED, nameOf(BURIED), 1_000);
}, 120_000);

afterAll(async () => {
  await api?.close();
  if (stateDir) await rm(stateDir, { recursive: true, force: true });
});

async function plan(gateway: GatewayView) {
  const { profiles, client } = profilesFor(api.credentials.token);
  const listings = await listProfiles(client, profiles);
  const tombstones = new Map(await LeaseLedger.inDirectory(stateDir).all());
  return { listings, plan: planGc(gateway, listings, tombstones) };
}

describe("gc", () => {
  it("without the gateway removes only the tombstoned lease's sandbox, and says how to prove the rest", async () => {
    const { plan: p } = await plan(await unreachable());
    expect(p.remove.map((i) => i.sandboxName)).toEqual([nameOf(BURIED)]);
    const kept = Object.fromEntries(p.keep.map((i) => [i.sandboxName, i.reason]));
    expect(Object.keys(kept).sort()).toEqual([nameOf(HELD), nameOf(LOOSE), "someone-else"].sort());
    expect(kept[nameOf(LOOSE)]).toMatch(/gateway is not reachable.*Start the gateway/);
    expect(kept["someone-else"]).toMatch(/not one of our lease names/);
  });

  it("keeps everything unproven while an environment of ours is still provisioning without a lease id", async () => {
    const { plan: p } = await plan(await gatewayWith([worker("e1", "ready", HELD), worker("e2", "provisioning")]));
    expect(p.remove.map((i) => i.sandboxName)).toEqual([nameOf(BURIED)]);
    expect(p.keep.find((i) => i.sandboxName === nameOf(HELD))?.reason).toBe("owned by environment e1 (ready)");
    expect(p.keep.find((i) => i.sandboxName === nameOf(LOOSE))?.reason).toMatch(/still provisioning/);
  });

  it("a dry run reports the removals and deletes nothing", async () => {
    const gateway = await gatewayWith([worker("e1", "ready", HELD), worker("e0", "destroyed", LOOSE)]);
    const { plan: p, listings } = await plan(gateway);
    const ledger = LeaseLedger.inDirectory(stateDir);
    const report = await runGc(p, listings, { ledger, images: ImageStore.inDirectory(stateDir) }, true);
    expect(report.removed.map((i) => i.sandboxName).sort()).toEqual([nameOf(BURIED), nameOf(LOOSE)].sort());
    expect(renderGc(report)).toContain("Run without --dry-run to remove them.");
    expect(await names()).toContain(nameOf(LOOSE));
    expect(await ledger.tombstone(LOOSE)).toBeUndefined();
  });

  it("a failed release is reported with what to do next and changes nothing", async () => {
    const good = await plan(await gatewayWith([worker("e1", "ready", HELD)]));
    // The plan is made from the real listing; the release then goes through a project whose token is refused.
    const { profiles, client } = profilesFor("not-the-token");
    const [profile] = profiles;
    if (!profile?.ok) throw new Error("the test profile must be valid");
    const refused = await client.project(profile.settings);
    const listings = good.listings.map((l) => (l.state === "listed" ? { ...l, project: refused } : l));
    const deps = { ledger: LeaseLedger.inDirectory(stateDir), images: ImageStore.inDirectory(stateDir) };
    const report = await runGc(good.plan, listings, { ...deps, absenceProof: quickProof }, false);
    expect(report.removed).toEqual([]);
    expect(report.failed.map((i) => i.sandboxName).sort()).toEqual([nameOf(BURIED), nameOf(LOOSE)].sort());
    expect(report.failed[0]?.reason).toMatch(/run gc again/);
    expect(await names()).toContain(nameOf(BURIED));
  });

  it("removes the proven orphans, proves them absent, releases their image choice, and leaves the rest", async () => {
    const images = ImageStore.inDirectory(stateDir);
    const choice = { key: "k", profileKey: "p", choice: { kind: "cold" as const }, recordedAt: 1 };
    await images.recordChoice({ leaseId: LOOSE, ...choice, phase: "enrolled" });
    await images.recordChoice({ leaseId: HELD, ...choice, phase: "enrolled" });
    const { plan: p, listings } = await plan(await gatewayWith([worker("e1", "ready", HELD)]));
    const ledger = LeaseLedger.inDirectory(stateDir);
    const report = await runGc(p, listings, { ledger, images, absenceProof: quickProof }, false);
    expect(report.failed).toEqual([]);
    expect(report.removed.map((i) => i.sandboxName).sort()).toEqual([nameOf(BURIED), nameOf(LOOSE)].sort());
    expect(await names()).toEqual([nameOf(HELD), nameOf("vsb_444444444444444444444444"), "someone-else"].sort());
    expect((await ledger.tombstone(LOOSE))?.provenAbsentAt).toBeGreaterThan(0);
    expect((await ledger.tombstone(BURIED))?.provenAbsentAt).toBeGreaterThan(0);
    expect(renderGc(report)).toMatch(/^2 removed, 0 failed, 2 kept\./);
    expect(await images.choiceFor(LOOSE)).toBeUndefined();
    expect(await images.choiceFor(HELD)).toBeDefined();
  });

  it("never removes a sandbox a provision creates while gc is looking: Vercel is listed before the gateway is asked", async () => {
    // The window: the gateway computes its answer before the provision's environment exists, then the provision
    // creates its sandbox. Vercel serves every request of gc's after a provision in flight has created its
    // sandbox (as a real list would, once the create has landed), so whichever source gc reads first decides.
    const fresh = "vsb_555555555555555555555555";
    const environments = [worker("e1", "ready", HELD)];
    let provision: Promise<unknown> = Promise.resolve();
    const call: GatewayCall = async (method) => {
      if (method !== "environments.list") return { version: 1, keepalive: [] };
      const answer = { environments: [...environments] };
      provision = Sandbox.create({
        ...api.credentials,
        fetch: api.fetch,
        name: nameOf(fresh),
        runtime: "node24",
        tags: { "openclaw-scope": SCOPE },
      }).then(() => environments.push(worker("e5", "provisioning")));
      await provision;
      return answer;
    };
    const held: typeof globalThis.fetch = async (input, init) => {
      await provision;
      return api.fetch(input, init);
    };
    const { profiles, client } = profilesFor(api.credentials.token, held);
    const ledger = LeaseLedger.inDirectory(stateDir);
    const { gateway, listings, tombstones } = await observe({ call, client, profiles, ledger });
    const p = planGc(gateway, listings, tombstones);
    const report = await runGc(p, listings, { ledger, images: ImageStore.inDirectory(stateDir) }, false);
    expect(report.removed.map((i) => i.sandboxName)).not.toContain(nameOf(fresh));
    expect(await names()).toContain(nameOf(fresh));
    expect(await ledger.tombstone(fresh)).toBeUndefined();
  });
});
