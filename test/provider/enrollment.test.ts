// The built-in node enrollment against the emulator and a stand-in artifact gateway (fixtures/): the
// bootstrap downloads the artifact (pinned, bearer), installs it with npm, starts the node as the sandbox's
// user, and on replay adopts the node it started or resumes it on the runtime it already verified.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
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
    await provider.destroy({ leaseId, profile: h.profile });
    expect(await h.sandboxExists(leaseId)).toBe(false);
  });
});
