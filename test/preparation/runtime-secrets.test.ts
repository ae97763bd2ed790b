// The credentials a warm preparation hands to the box are redacted like enrollment's: core's runtime token and
// worker-bundle token (each its own bearer token at the gateway's artifact route) are registered for the lease
// as soon as core hands them over, so `redact` masks them while the lease lives, and neither reaches a log line
// or an error the provider emits, on a capture that succeeds and on one whose bundle fetch is refused.
import type { WorkerLease } from "openclaw/plugin-sdk/plugin-entry";
import { describe, expect, it } from "vitest";
import { redact } from "../../src/infra/redact.js";
import { operationId } from "../provider/fixtures/enrollment-harness.js";
import { createRepo, runtimePreparation, workerArchive } from "./fixtures.js";
import { useWarmWorld } from "./warm-harness.js";

const world = useWarmWorld();
const { stateDir, diagnosticsOf } = world;

/**
 * A warm preparation that captures an image (a new project, so its first lease's preparation is due one), cold
 * with the runtime install when `archive` is a worker archive no base image was built with yet.
 */
async function prepareWarm(tokens: { runtime: string; worker: string }, archive = world.worker) {
  const provider = world.h.provider({ stateDir });
  const repo = createRepo();
  repo.commit({ ".devcontainer.json": JSON.stringify({ updateContentCommand: "echo prepared" }) });
  const op = operationId();
  const leaseId = (await provider.resolveAllocation(world.h.profile, op)).leaseId;
  const preparation = await world.core.projectOf(repo);
  const options = world.h.options(
    leaseId,
    { artifact: world.runtime },
    { project: preparation.project, prepareNodeRuntime: runtimePreparation(world.h, world.runtime, archive, tokens) },
  );
  const outcome: { lease?: WorkerLease; error?: Error } = await provider.provision(world.h.profile, op, options).then(
    (lease) => ({ lease }),
    (error: Error) => ({ error }),
  );
  preparation.close();
  return { provider, leaseId, ...outcome };
}

const masks = (token: string) => {
  const line = `GET artifact with Bearer-less ${token} in the text`;
  return !redact(line).includes(token) && redact(line).startsWith("GET artifact with");
};
const logged = (token: string) => world.h.logs.filter((line) => line.includes(token));

describe("warm preparation credentials", () => {
  it("the runtime and worker-bundle tokens are masked while the lease lives, and in no log line", async () => {
    const tokens = { runtime: world.h.gateway.issueToken(), worker: world.h.gateway.issueToken() };
    expect([masks(tokens.runtime), masks(tokens.worker)]).toEqual([false, false]);
    const { provider, leaseId, lease, error } = await prepareWarm(tokens);
    expect(error).toBeUndefined();
    expect(lease?.leaseId).toBe(leaseId);
    // The path that hands both tokens to the box ran: an image was captured with the worker archive in it.
    const diagnostics = await diagnosticsOf(leaseId);
    expect(diagnostics?.captured).toBe(true);
    expect(world.h.logs.some((l) => l.includes(`${leaseId}: bootstrap publish `))).toBe(true);
    expect([masks(tokens.runtime), masks(tokens.worker)]).toEqual([true, true]);
    expect([logged(tokens.runtime), logged(tokens.worker)]).toEqual([[], []]);
    // Scoped to the lease: its end drops them, as it drops enrollment's.
    await provider.destroy({ leaseId, profile: world.h.profile });
    expect([masks(tokens.runtime), masks(tokens.worker)]).toEqual([false, false]);
  }, 240_000);

  it("a bundle fetch the gateway refuses fails the dispatch with an error that holds neither token", async () => {
    // A worker-bundle token the gateway never issued: the runtime installs, the bundle's download gets a 401.
    // A new worker archive (a new runtime digest): no base image of it exists, so the worker is cold.
    const tokens = { runtime: world.h.gateway.issueToken(), worker: `unissued-${operationId()}` };
    const upgraded = workerArchive();
    world.h.gateway.serve(upgraded);
    const { error } = await prepareWarm(tokens, upgraded);
    expect(error?.message).toMatch(/http-401/);
    for (const token of [tokens.runtime, tokens.worker]) {
      expect(error?.message).not.toContain(token);
      expect(error?.stack ?? "").not.toContain(token);
      expect(logged(token)).toEqual([]);
    }
    // The failed attempt is over: what it registered is dropped (a replay registers its own).
    expect([masks(tokens.runtime), masks(tokens.worker)]).toEqual([false, false]);
  }, 240_000);
});
