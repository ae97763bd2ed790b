// Every way the built-in node enrollment can fail, against the emulator and the stand-in artifact gateway:
// each gives its own clear error, releases the sandbox with proof, and says nothing secret.
import { WorkerProviderError } from "openclaw/plugin-sdk/plugin-entry";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Artifact, artifactOf, packFixture } from "./fixtures/artifact.js";
import { type EnrollmentSpec, type Harness, operationId, startHarness } from "./fixtures/enrollment-harness.js";
import type { Misbehaviour } from "./fixtures/gateway-server.js";

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

/** Provisions with a faulty enrollment; asserts the common outcome and returns the error. */
async function failedProvision(spec: EnrollmentSpec, misbehaviour?: Misbehaviour, waitTimeoutMs = 60_000) {
  const provider = h.provider({ enrollment: { waitTimeoutMs, timings: { launchGraceMs: 1_000 } } });
  const op = operationId();
  const leaseId = await h.leaseOf(op);
  h.gateway.misbehave(misbehaviour);
  const error = await provider.provision(h.profile, op, h.options(leaseId, spec)).catch((e: unknown) => e);
  h.gateway.misbehave(undefined);
  expect(error).toBeInstanceOf(Error);
  // Retryable (core replays with a fresh enrollment), and nothing is left behind.
  expect(error).not.toBeInstanceOf(WorkerProviderError);
  expect(WorkerProviderError.isCleanupIndeterminate(error)).toBe(false);
  expect(await h.sandboxExists(leaseId)).toBe(false);
  const message = (error as Error).message;
  for (const secret of [h.gateway.token, ...h.setupCodes]) expect(message).not.toContain(secret);
  expect(h.logs.some((l) => l.includes(`${leaseId}: released`))).toBe(true);
  return message;
}

describe("node enrollment failures", () => {
  it("an artifact whose SHA-256 differs from the descriptor's is refused before it is installed", async () => {
    const message = await failedProvision({ artifact, descriptor: { sha256: "ab".repeat(32) } });
    expect(message).toMatch(/node bootstrap verify failed \(sha256-mismatch\)/);
    expect(message).toContain("was not installed");
    expect(message).toContain("node-runtime=absent");
  });

  it("an artifact of another size than the descriptor's is refused", async () => {
    const message = await failedProvision({ artifact, descriptor: { bytes: artifact.bytes.length + 1 } });
    expect(message).toMatch(/node bootstrap verify failed \(size-mismatch\)/);
  });

  it("a refused bootstrap token (HTTP 401) says the token was refused and a replay brings a fresh one", async () => {
    const message = await failedProvision({ artifact }, { status: 401 });
    expect(message).toMatch(/node bootstrap download failed \(http-401\)/);
    expect(message).toContain("refused the bootstrap token");
  });

  it("an artifact the gateway does not have (HTTP 404) says so", async () => {
    const missing = "f".repeat(64);
    const message = await failedProvision({ artifact, descriptor: { url: h.gateway.urlOf(missing), sha256: missing } });
    expect(message).toMatch(/node bootstrap download failed \(http-404\)/);
    expect(message).toContain("has no artifact with this digest");
  });

  it("a body that breaks off on every attempt is reported as truncated, after three attempts", async () => {
    const before = h.gateway.requests.length;
    const message = await failedProvision({ artifact }, { truncateAt: 100 });
    expect(message).toMatch(/node bootstrap download failed \(truncated\)/);
    expect(h.gateway.requests.length - before).toBe(3);
  });

  it("a certificate that does not match the pin is refused before the token is sent", async () => {
    const before = h.gateway.requests.length;
    const message = await failedProvision({ artifact, descriptor: { tlsFingerprint: `${"AB:".repeat(31)}AB` } });
    expect(message).toMatch(/node bootstrap download failed \(tls-pin-mismatch\)/);
    expect(message).toContain("nothing was sent");
    // The gateway never saw a request, so it never saw the token.
    expect(h.gateway.requests.length).toBe(before);
  });

  it("an archive npm cannot install fails the install with npm's own words", async () => {
    const broken = artifactOf(Buffer.from("this is not a gzip tarball\n".repeat(40)), "2026.9.2");
    h.gateway.serve(broken);
    const message = await failedProvision({ artifact: broken });
    expect(message).toMatch(/node bootstrap install failed \(npm-failed\)/);
    expect(message).toContain("npm said:");
  });

  it("an artifact holding another openclaw version than the gateway's is refused after install", async () => {
    const older = packFixture("2026.9.1");
    h.gateway.serve(older);
    const message = await failedProvision({ artifact: { ...older, version: "2026.9.2" } });
    expect(message).toMatch(/node bootstrap install failed \(runtime-mismatch\)/);
    expect(message).toContain("openclaw 2026.9.1, the gateway runs 2026.9.2");
  });

  it("a node that exits at once is reported with its log, not after the long wait", async () => {
    const crashing = packFixture("2026.9.2", { connect: "crash" });
    h.gateway.serve(crashing);
    const message = await failedProvision({ artifact: crashing });
    expect(message).toMatch(/node bootstrap launch failed \(node-exited\)/);
    expect(message).toContain("code 3");
    expect(message).toContain("refusing to start (crash fixture)");
    expect(message).toContain("node=dead-or-absent");
  });

  it("a node the gateway never sees enroll times out with evidence from the box", async () => {
    const message = await failedProvision({ artifact, device: "never" }, undefined, 1_500);
    expect(message).toMatch(/did not enroll with the gateway within \d+ s/);
    expect(message).toContain("box evidence: node-runtime=/home/vercel-sandbox/.openclaw-worker/node-runtimes/");
    expect(message).toContain("node=alive");
    expect(message).toContain("node host gateway connected");
  });
});
