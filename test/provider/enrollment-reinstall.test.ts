// A restarted gateway's replay of an enrolled lease whose node runtime is gone from the box (removed, or a box
// state without it). The replay runs at the enrolled, gateway-only egress stage, where npm cannot reach the
// registry; the bootstrap reports the missing runtime before downloading anything, the registry opens for the
// reinstall alone, and the box ends at the enrolled stage on success, failure and stop. The artifact's install
// needs the registry (fixtures/artifact.ts: installNeedsRegistry), as the real runtime's does.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Artifact, packFixture } from "./fixtures/artifact.js";
import { type Harness, HOME, operationId, startHarness } from "./fixtures/enrollment-harness.js";

const CREATE = /^\/v[23]\/sandboxes$/;
const REGISTRY = "registry.npmjs.org";

let h: Harness;
let artifact: Artifact;
const stateDirs: string[] = [];

beforeAll(async () => {
  h = await startHarness();
  artifact = packFixture("2026.9.2", {}, { installNeedsRegistry: true });
  h.gateway.serve(artifact);
});
afterAll(async () => {
  await h?.close();
  for (const dir of stateDirs) rmSync(dir, { recursive: true, force: true });
});

/**
 * Providers on one state dir (a gateway and its restart) for one lease, recording the body of every network
 * policy they send, through the SDK's fetch option (around the emulator's).
 */
function gatewayState() {
  const stateDir = mkdtempSync(join(tmpdir(), "vsb-reinstall-"));
  stateDirs.push(stateDir);
  const policies: string[] = [];
  const fetch = (async (input: string | URL | Request, init?: RequestInit) => {
    const url = new URL(input instanceof Request ? input.url : input);
    if (init?.method === "POST" && url.pathname.endsWith("/network-policy")) policies.push(String(init.body));
    return h.api.fetch(input, init);
  }) as typeof globalThis.fetch;
  return { policies, provider: () => h.provider({ stateDir, fetch }) };
}
/** Whether each policy sent since `from` admitted the registry. */
const registryIn = (policies: string[], from: number) => policies.slice(from).map((body) => body.includes(REGISTRY));

const nodeProcesses = async (leaseId: string) =>
  (await h.sh(leaseId, "ps -eo pid=,args= | grep '[o]penclaw.mjs' || true", true)).split("\n").filter(Boolean);

/** The runtime leaves the box and the node dies: what a replay meets when the box lost its runtime. */
async function loseRuntime(leaseId: string) {
  const [pid] = (await nodeProcesses(leaseId)).map((line) => line.trim().split(/\s+/)[0]);
  expect(pid).toMatch(/^\d+$/);
  await h.sh(
    leaseId,
    `rm -rf ${HOME}/.openclaw-worker/node-runtimes/${artifact.sha256}; kill ${pid}; while ps -o stat= -p ${pid} | grep -qv Z; do sleep 0.1; done`,
    true,
  );
  expect(await h.sh(leaseId, `ls ${HOME}/.openclaw-worker/node-runtimes`)).not.toContain(artifact.sha256);
  expect(await nodeProcesses(leaseId)).toEqual([]);
}

const gatewayTarget = () => `127.0.0.1:${new URL(h.gateway.origin).port}`;
/** What the sandbox's egress answers for the registry and the gateway right now. */
const egressAnswers = (leaseId: string) => h.egress(leaseId, [`${REGISTRY}:443`, gatewayTarget()]);
const GATEWAY_ONLY = () => [`${REGISTRY}:443 403`, `${gatewayTarget()} 200`];

const createsSince = (from: number) =>
  h.api
    .requests()
    .slice(from)
    .filter((r) => r.method === "POST" && CREATE.test(r.path));

/** A lease enrolled by one gateway whose box then lost its runtime and node; `sent` counts its policies so far. */
async function enrolledThenLost() {
  const gateway = gatewayState();
  const op = operationId();
  const leaseId = await h.leaseOf(op);
  const first = await gateway.provider().provision(h.profile, op, h.options(leaseId, { artifact }));
  await loseRuntime(leaseId);
  return { gateway, op, leaseId, first, sent: gateway.policies.length };
}

describe("replay of an enrolled lease whose runtime is gone", () => {
  it("reinstalls the runtime with the registry open, resumes the node on the same sandbox, and ends gateway-only", async () => {
    const { gateway, op, leaseId, first, sent } = await enrolledThenLost();
    // The first install ran at the bootstrap stage.
    expect(await h.sh(leaseId, "cat $HOME/registry-probe.log")).toBe("admitted\n");
    const from = h.api.requests().length;

    // The restarted gateway replays the operation: the ledger says enrolled, so this is the enrolled-lease path.
    const restarted = gateway.provider();
    const replayed = await restarted.provision(h.profile, op, h.options(leaseId, { artifact, mode: "resume" }));
    expect(replayed).toEqual(first);
    const after = await nodeProcesses(leaseId);
    expect(after).toHaveLength(1);
    expect(after[0]).toContain("node run --ephemeral");
    expect(await h.sh(leaseId, `ls ${HOME}/.openclaw-worker/node-runtimes`)).toContain(artifact.sha256);
    // The install ran while the egress admitted the registry (the box's own view), and no sandbox was made.
    expect(await h.sh(leaseId, "cat $HOME/registry-probe.log")).toBe("admitted\nadmitted\n");
    expect(createsSince(from)).toEqual([]);
    // Opened for the reinstall, then back to the enrolled stage: the registry is closed again.
    expect(registryIn(gateway.policies, sent)).toEqual([true, false]);
    expect(await egressAnswers(leaseId)).toEqual(GATEWAY_ONLY());
    await restarted.destroy({ leaseId, profile: h.profile });
    expect(await h.sandboxExists(leaseId)).toBe(false);
  });

  it("a replay whose runtime is intact changes no egress", async () => {
    const gateway = gatewayState();
    const op = operationId();
    const leaseId = await h.leaseOf(op);
    const first = await gateway.provider().provision(h.profile, op, h.options(leaseId, { artifact }));
    const sent = gateway.policies.length;
    const restarted = gateway.provider();
    expect(await restarted.provision(h.profile, op, h.options(leaseId, { artifact, mode: "resume" }))).toEqual(first);
    expect(gateway.policies.slice(sent)).toEqual([]);
    await restarted.destroy({ leaseId, profile: h.profile });
  });

  it("a reinstall that fails narrows the egress again before the sandbox is released", async () => {
    const { gateway, op, leaseId, sent } = await enrolledThenLost();
    h.gateway.misbehave({ status: 404 });
    try {
      const restarted = gateway.provider();
      const error = await restarted.provision(h.profile, op, h.options(leaseId, { artifact, mode: "resume" })).then(
        () => undefined,
        (e: unknown) => e as Error,
      );
      expect(error?.message).toContain("http-404");
    } finally {
      h.gateway.misbehave(undefined);
    }
    expect(registryIn(gateway.policies, sent)).toEqual([true, false]);
    expect(await h.sandboxExists(leaseId)).toBe(false);
  });

  it("a gateway shutdown during the reinstall keeps the sandbox, at the enrolled stage", async () => {
    const { gateway, op, leaseId, sent } = await enrolledThenLost();
    const downloads = h.gateway.requests.length;
    const shutdown = new AbortController();
    const restarted = gateway.provider();
    const provisioning = restarted
      .provision(h.profile, op, h.options(leaseId, { artifact, mode: "resume", signal: shutdown.signal }))
      .catch((e: unknown) => e);
    // The reinstall is under way once the box asks the gateway for the runtime.
    for (let i = 0; i < 1200 && h.gateway.requests.length === downloads; i += 1) await sleep(50);
    expect(h.gateway.requests.length).toBeGreaterThan(downloads);
    shutdown.abort(new Error("gateway is stopping"));
    expect(String(await provisioning)).toContain("gateway is stopping");
    expect(await h.sandboxExists(leaseId)).toBe(true);
    expect(registryIn(gateway.policies, sent)).toEqual([true, false]);
    expect(await egressAnswers(leaseId)).toEqual(GATEWAY_ONLY());
    await restarted.destroy({ leaseId, profile: h.profile });
    expect(await h.sandboxExists(leaseId)).toBe(false);
  });
});
