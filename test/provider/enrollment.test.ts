// The built-in node enrollment against the emulator and a stand-in artifact gateway (fixtures/): the
// bootstrap downloads the artifact (pinned, bearer), installs it with npm, starts the node as the sandbox's
// user, and on replay adopts the node it started or resumes it on the runtime it already verified.
import { setTimeout as sleep } from "node:timers/promises";
import { Sandbox } from "@vercel/sandbox";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { scanBox, WHOLE_DISK } from "../support/secret-scan.js";
import { type Artifact, packFixture } from "./fixtures/artifact.js";
import { type Harness, operationId, startHarness, stateDirOf } from "./fixtures/enrollment-harness.js";

let h: Harness;
let artifact: Artifact;

beforeAll(async () => {
  h = await startHarness();
  artifact = packFixture("2026.9.2");
  h.gateway.serve(artifact);
});
afterAll(async () => {
  await h?.close();
});

async function waitFor(condition: () => boolean) {
  for (let i = 0; i < 600 && !condition(); i += 1) await sleep(50);
  if (!condition()) throw new Error("condition not met in 30 s");
}

const nodeProcesses = async (leaseId: string) =>
  (await h.sh(leaseId, "ps -eo pid=,uid=,args= | grep '[o]penclaw.mjs' || true", true))
    .split("\n")
    .filter(Boolean)
    .map((line) => line.trim().split(/\s+/));

describe("node enrollment", () => {
  it("enrolls a node on the sandbox and leases the device the node reported", async () => {
    const provider = h.provider();
    const op = operationId();
    const leaseId = await h.leaseOf(op);
    const lease = await provider.provision(
      h.profile,
      op,
      h.options(leaseId, { artifact, enabledPluginIds: ["codex"] }),
    );
    const identity = JSON.parse(await h.sh(leaseId, `cat ${stateDirOf(leaseId)}/identity.json`));
    expect(lease).toEqual({ leaseId, sharedHost: false, node: { deviceId: identity.deviceId } });
    expect(identity).toMatchObject({ displayName: "Cloud worker enroll-spec", ephemeral: true });

    const processes = await nodeProcesses(leaseId);
    expect(processes).toHaveLength(1);
    expect(processes[0]?.[1]).toBe("1000");
    expect(processes[0]?.join(" ")).toContain("connect --target-file");
    const state = await h.sh(
      leaseId,
      `stat -c '%a %U' ${stateDirOf(leaseId)}; cat ${stateDirOf(leaseId)}/plugins-enabled; ls ${stateDirOf(leaseId)}`,
    );
    expect(state).toContain("700 vercel-sandbox");
    expect(state).toContain("codex");
    expect(state).not.toContain("setup-code");
    expect(h.gateway.requests.filter((r) => r.authorized)).toHaveLength(1);
    for (const phase of ["preparation", "reuse", "download", "verify", "install", "activate", "launch", "wait"]) {
      expect(h.logs.some((line) => line.includes(`${leaseId}: bootstrap ${phase} `) && / \d+ ms/.test(line))).toBe(
        true,
      );
    }
    await provider.destroy({ leaseId, profile: h.profile });
    expect(await h.sandboxExists(leaseId)).toBe(false);
  });

  it("a download that breaks off once is fetched again, its partial file gone, and the node enrolls", async () => {
    const provider = h.provider();
    const op = operationId();
    const leaseId = await h.leaseOf(op);
    const before = h.gateway.requests.filter((r) => r.authorized).length;
    h.gateway.misbehave({ truncateAt: 1_000, times: 1 });
    const lease = await provider.provision(h.profile, op, h.options(leaseId, { artifact }));
    expect(lease.leaseId).toBe(leaseId);
    expect(h.gateway.requests.filter((r) => r.authorized).length - before).toBe(2);
    const runtimes = await h.sh(leaseId, "ls -A /home/vercel-sandbox/.openclaw-worker/node-runtimes", true);
    expect(runtimes.split("\n").filter(Boolean)).toEqual([artifact.sha256]);
    await provider.destroy({ leaseId, profile: h.profile });
  });

  it("the bootstrap ends once the node has taken its setup code: the rest of the launch grace is not waited out", {
    timeout: 180_000,
  }, async () => {
    // A grace of ten minutes: a program kept alive by its grace timer would hold the provision for all of it.
    const graceMs = 10 * 60_000;
    const provider = h.provider({ enrollment: { timings: { launchGraceMs: graceMs } } });
    const op = operationId();
    const leaseId = await h.leaseOf(op);
    const provision = provider.provision(h.profile, op, h.options(leaseId, { artifact }));
    const outcome = await Promise.race([provision, sleep(120_000).then(() => "still waiting after 120 s")]);
    expect(outcome).toMatchObject({ leaseId, node: { deviceId: expect.stringMatching(/^device-/) } });
    expect(await nodeProcesses(leaseId)).toHaveLength(1);
    await provider.destroy({ leaseId, profile: h.profile });
    expect(await h.sandboxExists(leaseId)).toBe(false);
  });

  it("the runtime install leaves no npm cache on the box: each install has its own, gone with it", async () => {
    const provider = h.provider();
    const op = operationId();
    const leaseId = await h.leaseOf(op);
    await provider.provision(h.profile, op, h.options(leaseId, { artifact }));
    const left = await h.sh(
      leaseId,
      "ls -A ~/.npm/_cacache 2>/dev/null | head -3; ls -A ~/.openclaw-worker/node-runtimes | grep -v '^[0-9a-f]\\{64\\}$' || true",
    );
    expect(left.trim()).toBe("");
    expect(await h.sh(leaseId, "ls ~/.openclaw-worker/node-runtimes")).toMatch(new RegExp(`^${artifact.sha256}\\s*$`));
    await provider.destroy({ leaseId, profile: h.profile });
  });

  it("a replay adopts the node it started instead of starting a second, and a dead node resumes on the verified runtime", async () => {
    const provider = h.provider();
    const op = operationId();
    const leaseId = await h.leaseOf(op);
    const first = await provider.provision(h.profile, op, h.options(leaseId, { artifact }));
    const [started] = await nodeProcesses(leaseId);
    const downloads = h.gateway.requests.length;

    // The gateway restarted and replays the operation: the setup code was consumed, so it resumes.
    const restarted = h.provider();
    const replayed = await restarted.provision(h.profile, op, h.options(leaseId, { artifact, mode: "resume" }));
    expect(replayed).toEqual(first);
    expect(await nodeProcesses(leaseId)).toEqual([started]);
    expect(h.logs.some((l) => l.includes(`${leaseId}: bootstrap adopted running node pid ${started?.[0]}`))).toBe(true);
    expect(h.gateway.requests.length).toBe(downloads);

    // The node died meanwhile: the next replay starts `node run` on the runtime already verified, no download.
    await h.sh(
      leaseId,
      `kill ${started?.[0]}; while ps -o stat= -p ${started?.[0]} | grep -qv Z; do sleep 0.1; done`,
      true,
    );
    const resumed = await restarted.provision(h.profile, op, h.options(leaseId, { artifact, mode: "resume" }));
    expect(resumed).toEqual(first);
    const after = await nodeProcesses(leaseId);
    expect(after).toHaveLength(1);
    expect(after[0]?.join(" ")).toContain("node run --ephemeral");
    expect(h.logs.some((l) => l.includes(`${leaseId}: bootstrap reuse `) && l.includes('"reused":true'))).toBe(true);
    expect(h.gateway.requests.length).toBe(downloads);
    await restarted.destroy({ leaseId, profile: h.profile });
    expect(await h.sandboxExists(leaseId)).toBe(false);
  });

  it("egress is gateway-only once the node enrolled: the package registry is closed again", async () => {
    const provider = h.provider();
    const op = operationId();
    const leaseId = await h.leaseOf(op);
    await provider.provision(h.profile, op, h.options(leaseId, { artifact }));
    // Asked of the sandbox's egress itself (a CONNECT per destination; a refusal makes no connection).
    const gatewayPort = new URL(h.gateway.origin).port;
    const answers = await h.egress(leaseId, ["registry.npmjs.org:443", `127.0.0.1:${gatewayPort}`]);
    expect(answers).toEqual(["registry.npmjs.org:443 403", `127.0.0.1:${gatewayPort} 200`]);
    await provider.destroy({ leaseId, profile: h.profile });
  });

  it("a gateway shutdown during the wait keeps the sandbox and its node; the restarted gateway's replay adopts it", async () => {
    const shutdown = new AbortController();
    const provider = h.provider();
    const op = operationId();
    const leaseId = await h.leaseOf(op);
    const provisioning = provider
      .provision(h.profile, op, h.options(leaseId, { artifact, device: "never", signal: shutdown.signal }))
      .catch((e: unknown) => e);
    await waitFor(() => h.logs.some((l) => l.includes(`${leaseId}: bootstrap started node`)));
    shutdown.abort(new Error("gateway is stopping"));
    expect(String(await provisioning)).toContain("gateway is stopping");
    expect(await h.sandboxExists(leaseId)).toBe(true);
    const [kept] = await nodeProcesses(leaseId);

    const restarted = h.provider();
    const lease = await restarted.provision(h.profile, op, h.options(leaseId, { artifact, mode: "resume" }));
    expect(lease.node?.deviceId).toMatch(/^device-/);
    expect(await nodeProcesses(leaseId)).toEqual([kept]);
    await restarted.destroy({ leaseId, profile: h.profile });
  });

  it("an operator stop during the wait releases the sandbox", async () => {
    const stop = new AbortController();
    const provider = h.provider();
    const op = operationId();
    const leaseId = await h.leaseOf(op);
    const provisioning = provider
      .provision(h.profile, op, h.options(leaseId, { artifact, device: "never" }, { signal: stop.signal }))
      .catch((e: unknown) => e);
    await waitFor(() => h.logs.some((l) => l.includes(`${leaseId}: bootstrap started node`)));
    stop.abort(new Error("stopped by the operator"));
    expect(String(await provisioning)).toContain("stopped by the operator");
    expect(await h.sandboxExists(leaseId)).toBe(false);
  });

  it("no token or setup code reaches the API's request log, the logs, argv, environments or files on the sandbox", async () => {
    const provider = h.provider();
    const op = operationId();
    const leaseId = await h.leaseOf(op);
    await provider.provision(h.profile, op, h.options(leaseId, { artifact }));
    const secrets = [h.gateway.token, ...h.setupCodes];
    const report = await scanEverything(await h.sandbox(leaseId), secrets);
    expect(report.hits).toEqual([]);
    // The scan read the node's own environment and the state dir (and found its canary), so an empty result
    // means something.
    expect(report.files).toBeGreaterThan(20);
    expect(report.processes).toBeGreaterThan(0);
    const published = JSON.stringify(h.api.requests()) + h.logs.join("\n");
    for (const secret of secrets) expect(published).not.toContain(secret);
    // A snapshot taken afterwards (a warm image would be one) holds none of them either.
    const snapshot = await (await h.sandbox(leaseId)).snapshot();
    const restored = await Sandbox.create({
      ...h.api.credentials,
      fetch: h.api.fetch,
      source: { type: "snapshot", snapshotId: snapshot.snapshotId },
    });
    const restoredReport = await scanEverything(restored, secrets);
    expect(restoredReport.hits).toEqual([]);
    // The snapshot carries the installed runtime and the node's state dir: the scan read them.
    expect(restoredReport.files).toBeGreaterThan(20);
    await restored.delete();
    await snapshot.delete();
    await provider.destroy({ leaseId, profile: h.profile });
  });
});

/**
 * The box's whole disk and every process's argv and environment but the scan's own (which holds the needles), by
 * the one secret scan (test/support/secret-scan.ts): the files and processes holding a needle, and how much it read.
 */
async function scanEverything(box: Sandbox, secrets: string[]) {
  const needles = Object.fromEntries(secrets.map((s, i) => [`secret #${i + 1}`, s]));
  const report = await scanBox(box, { ...WHOLE_DISK, needles, processes: true });
  return {
    hits: Object.values(report.hits).flat(),
    files: report.filesRead,
    processes: report.processesRead,
  };
}
