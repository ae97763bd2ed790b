// The node's plugins per OpenClaw release, on a real emulator sandbox with the stand-in runtime: up to 2026.9.4 the
// runtime pointer is published and each plugin enabled in its own call (that CLI takes one id); from 2026.9.5
// one call enables them all before the pointer is published, as that release's own Crabbox does.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { packFixture } from "./fixtures/artifact.js";
import { type Harness, operationId, startHarness, stateDirOf } from "./fixtures/enrollment-harness.js";

let h: Harness;

beforeAll(async () => {
  h = await startHarness();
});
afterAll(async () => {
  await h?.close();
});

async function enabledOn(version: string): Promise<string[]> {
  const artifact = packFixture(version);
  h.gateway.serve(artifact);
  const provider = h.provider();
  const op = operationId();
  const leaseId = await h.leaseOf(op);
  await provider.provision(h.profile, op, h.options(leaseId, { artifact, enabledPluginIds: ["codex", "extra"] }));
  const lines = (await h.sh(leaseId, `cat ${stateDirOf(leaseId)}/plugins-enabled`)).trim().split("\n");
  const link = await h.sh(leaseId, `readlink ${stateDirOf(leaseId)}/runtime`);
  expect(link.trim()).toMatch(/node-runtimes\/[0-9a-f]{64}$/);
  await provider.destroy({ leaseId, profile: h.profile });
  return lines;
}

describe("plugin activation per OpenClaw release", () => {
  it("2026.9.4: the pointer first, then one enable call per plugin", { timeout: 180_000 }, async () => {
    expect(await enabledOn("2026.9.4")).toEqual(["codex pointer", "extra pointer"]);
  });

  it("2026.9.5: one enable call for every plugin, before the pointer is published", { timeout: 180_000 }, async () => {
    expect(await enabledOn("2026.9.5")).toEqual(["codex extra no-pointer"]);
  });
});
