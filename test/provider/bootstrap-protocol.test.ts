// The bootstrap program's lines come from an untrusted box (its agent has sudo): only what the program's
// schema allows is believed, every string reaches a log or an error as one bounded plain line, and nothing a
// box prints chooses how a failure is classified beyond what the schema allows.
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { WorkerProviderError } from "openclaw/plugin-sdk/plugin-entry";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { NodeBootstrapError } from "../../src/provider/enrollment/errors.js";
import { evidenceText, outcomeOf, parseOutput } from "../../src/provider/enrollment/protocol.js";
import { artifactOf, packFixture } from "./fixtures/artifact.js";
import { type Harness, operationId, startHarness } from "./fixtures/enrollment-harness.js";

const line = (event: Record<string, unknown>) => JSON.stringify({ vsb: true, ...event });
const failed = (fields: Record<string, unknown>) =>
  line({ event: "failed", phase: "download", code: "connection", message: "m", ...fields });
const done = (fields: Record<string, unknown>) =>
  line({ event: "done", adopted: false, pid: 42, runtime: "installed", ...fields });

const CONTROL = /[\u0000-\u001f\u007f-\u009f]/;

describe("bootstrap lines failing the schema are dropped and counted", () => {
  const dropped: Array<[string, string]> = [
    ["an unknown code", failed({ code: "totally-permanent" })],
    ["a code with control characters", failed({ code: "http-401\n" })],
    ["a phase the program has not", failed({ phase: "uninstall" })],
    ["a permanent code from a phase that cannot emit it", failed({ phase: "launch", code: "node-version" })],
    ["a registry-widening code from another phase", failed({ phase: "download", code: "runtime-missing" })],
    ["a pid given as a string", done({ pid: "42" })],
    ["a negative pid", done({ pid: -1 })],
    ["a pid past pid_max", done({ pid: 2 ** 40 })],
    ["a fractional pid", done({ pid: 4.2 })],
    ["an unknown runtime", done({ runtime: "root" })],
    ["an extra field", done({ admin: true })],
    ["a 1 MB message", failed({ message: "x".repeat(1024 * 1024) })],
    ["an unknown event", line({ event: "grant" })],
    ["evidence of an unknown node state", line({ event: "evidence", runtime: "r", node: "root", logTail: "" })],
    ["a phase event with a negative duration", line({ event: "phase", phase: "reuse", ms: -5, detail: null })],
  ];
  it.each(dropped)("%s", (_, forged) => {
    const parsed = parseOutput(`${forged}\n${done({})}`);
    expect(parsed.malformed).toBe(1);
    expect(parsed.events).toEqual([{ event: "done", adopted: false, pid: 42, runtime: "installed" }]);
  });

  it("lines that do not claim to be the program's are ignored, not counted", () => {
    expect(parseOutput('npm warn x\n{"vsb":false}\n[1,2]\n')).toEqual({ events: [], malformed: 0 });
  });
});

describe("what the schema admits is believed, as plain bounded text", () => {
  it("a message with control characters, ANSI escapes and forged newlines becomes one plain line", () => {
    const forged = failed({ message: 'bad\u001b[31mRED\u001b[0m\r\nvercel-sandbox: released\u0007\u2028{"vsb":true}' });
    const [event] = parseOutput(forged).events;
    expect(event).toMatchObject({ event: "failed", code: "connection" });
    const { message } = event as { message: string };
    expect(message).not.toMatch(CONTROL);
    expect(message).not.toContain("\u2028");
    expect(message).toBe('bad [31mRED [0m vercel-sandbox: released {"vsb":true}');
  });

  it("a long message within the line bound is cut to 2000 characters", () => {
    const [event] = parseOutput(failed({ message: "y".repeat(10_000) })).events;
    expect((event as { message: string }).message.length).toBe(2000);
  });

  it("the program's own codes and Node's error codes are kept", () => {
    for (const code of ["http-401", "sha256-mismatch", "EACCES", "ERR_INVALID_ARG_TYPE", "unexpected"]) {
      expect(outcomeOf(parseOutput(failed({ code })).events)).toMatchObject({ code });
    }
    expect(outcomeOf(parseOutput(failed({ phase: "preparation", code: "node-version" })).events)).toMatchObject({
      code: "node-version",
    });
  });

  it("a duplicated or contradicting outcome is believed in neither form", () => {
    expect(outcomeOf(parseOutput(`${done({})}\n${done({})}`).events)).toBeUndefined();
    expect(outcomeOf(parseOutput(`${failed({})}\n${done({})}`).events)).toBeUndefined();
  });

  it("evidence from the box is one plain bounded line", () => {
    const [event] = parseOutput(
      line({ event: "evidence", runtime: "a\nb", node: "alive", logTail: `\u001b[2J${"z".repeat(9000)}\n` }),
    ).events;
    const text = evidenceText(event as Parameters<typeof evidenceText>[0]);
    expect(text).not.toMatch(CONTROL);
    expect(text.length).toBeLessThanOrEqual(2048 + 20);
    expect(evidenceText(undefined, "exit 1\n\u001b[31mforged")).toBe("box evidence unavailable: exit 1 [31mforged");
  });

  it("an error built from an admitted failure carries no control characters", () => {
    const [event] = parseOutput(failed({ message: "one\ntwo\u001b]0;title\u0007" })).events as Array<{
      phase: string;
      code: string;
      message: string;
    }>;
    const error = new NodeBootstrapError(event!.phase, event!.code, event!.message);
    expect(error.message).toBe("vercel-sandbox: node bootstrap download failed (connection): one two ]0;title");
  });
});

// A runtime whose `openclaw` answers the version check, then, started as the node, prints terminal escapes,
// forged provider log lines and a forged bootstrap `failed` line claiming a permanent code, and exits.
const MALICIOUS_NODE = `#!/usr/bin/env node
const args = process.argv.slice(2);
if (args[0] === "--version") console.log("OpenClaw 2026.9.2 (fixture)");
else if (args[0] === "connect" || args[0] === "node") {
  process.stdout.write("\\u001b[2J\\u001b]0;owned\\u0007\\r\\nvercel-sandbox vsb_forged: released\\n");
  process.stdout.write('{"vsb":true,"event":"failed","phase":"preparation","code":"node-version","message":"forged permanent"}\\n');
  process.exit(3);
}
`;

function maliciousArtifact() {
  const dir = mkdtempSync(join(tmpdir(), "openclaw-malicious-"));
  try {
    writeFileSync(join(dir, "openclaw.mjs"), MALICIOUS_NODE);
    writeFileSync(
      join(dir, "package.json"),
      JSON.stringify({ name: "openclaw", version: "2026.9.2", type: "module", bin: { openclaw: "openclaw.mjs" } }),
    );
    const name = execFileSync("npm", ["pack", "--silent", "--pack-destination", dir], { cwd: dir, encoding: "utf8" })
      .trim()
      .split("\n")
      .pop() as string;
    return artifactOf(readFileSync(join(dir, name)), "2026.9.2");
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

describe("a malicious node on the box", () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness();
  }, 120_000);
  afterAll(async () => {
    await h?.close();
  });

  it("the program's own output passes the schema: an enrollment logs every phase and no malformed line", async () => {
    const artifact = packFixture("2026.9.2");
    h.gateway.serve(artifact);
    const provider = h.provider();
    const op = operationId();
    const leaseId = await h.leaseOf(op);
    const outcome = await provider.provision(h.profile, op, h.options(leaseId, { artifact }));
    expect(outcome).toMatchObject({ leaseId });
    const ours = h.logs.filter((l) => l.includes(`${leaseId}: bootstrap`));
    for (const phase of ["preparation", "reuse", "download", "verify", "install", "activate", "launch"]) {
      expect(
        ours.some((l) => l.includes(`bootstrap ${phase} `)),
        phase,
      ).toBe(true);
    }
    expect(h.logs.filter((l) => l.includes("malformed bootstrap output"))).toEqual([]);
    await provider.destroy({ leaseId, profile: h.profile });
  }, 300_000);

  it("its output reaches the provider's error and log as plain text, and cannot make the failure permanent", async () => {
    const artifact = maliciousArtifact();
    h.gateway.serve(artifact);
    const provider = h.provider();
    const op = operationId();
    const leaseId = await h.leaseOf(op);
    const error = await provider.provision(h.profile, op, h.options(leaseId, { artifact })).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(Error);
    // Retryable: a replay gets a fresh sandbox; nothing the box printed chose a permanent failure.
    expect(error).not.toBeInstanceOf(WorkerProviderError);
    const message = (error as Error).message;
    expect(message).toMatch(/node bootstrap launch failed \(node-exited\)/);
    // The node's output did reach the message, flattened into one plain line.
    expect(message).toContain("vercel-sandbox vsb_forged: released");
    expect(message).toContain("forged permanent");
    expect(message).not.toMatch(CONTROL);
    const ours = h.logs.filter((l) => l.includes(leaseId));
    expect(ours.length).toBeGreaterThan(0);
    for (const entry of h.logs) expect(entry).not.toMatch(CONTROL);
  }, 300_000);
});
