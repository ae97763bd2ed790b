// Issue 25, secrets on the box while the bootstrap runs: a process of the sandbox's own user (a leftover
// agent of an adopted sandbox) polls every /proc/<pid>/environ and cmdline it can read and every file of the
// user's home it can read, through a first enrollment, a replay that adopts the running node and a replay
// after the node died. It must never see the bootstrap token or a setup code; and a replay that adopts its
// running node must not hand the box a token or setup code at all.
import { type Command, Sandbox } from "@vercel/sandbox";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { sandboxNameOf } from "../../src/provider/allocation.js";
import { type Artifact, packFixture } from "./fixtures/artifact.js";
import { type EnrollmentSpec, type Harness, operationId, startHarness } from "./fixtures/enrollment-harness.js";

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

/**
 * The spy: no needle is given to it (its own environment would hold it); it reports anything shaped like the
 * harness's token (`bootstrap-<32 hex>`) or setup codes (`setupcode-<32 hex>`), and how much it saw.
 */
const SPY = `
const fs = require("node:fs"); const path = require("node:path");
const shape = /(?:setupcode|bootstrap)-[0-9a-f]{32}/g;
const found = new Set(); const environs = new Set(); let scans = 0; let sawConnect = false;
const note = (where, text) => { for (const m of text.match(shape) || []) found.add(where + " " + m); };
const read = (file) => { try { return fs.readFileSync(file, "latin1"); } catch { return undefined; } };
function walk(dir, depth) {
  let entries = []; try { entries = fs.readdirSync(dir, { withFileTypes: true }); } catch { return; }
  for (const e of entries) {
    const p = path.join(dir, e.name);
    if (e.isDirectory() && depth < 16) walk(p, depth + 1);
    else if (e.isFile()) { const text = read(p); if (text !== undefined) note(p, text); }
  }
}
function scan() {
  for (const pid of fs.readdirSync("/proc")) {
    if (!/^[0-9]+$/.test(pid) || Number(pid) === process.pid) continue;
    const environ = read("/proc/" + pid + "/environ");
    if (environ !== undefined) { environs.add(pid); note("/proc/" + pid + "/environ", environ); }
    const cmdline = read("/proc/" + pid + "/cmdline");
    if (cmdline !== undefined) { if (cmdline.includes("--target-file")) sawConnect = true; note("/proc/" + pid + "/cmdline", cmdline); }
  }
  walk(process.env.HOME, 0);
  scans += 1;
}
(function loop() {
  scan();
  if (fs.existsSync("/tmp/spy-stop")) {
    console.log(JSON.stringify({ scans, environs: environs.size, sawConnect, found: [...found] }));
    return;
  }
  setTimeout(loop, 2);
})();
`;

interface SpyReport {
  scans: number;
  environs: number;
  sawConnect: boolean;
  found: string[];
}

describe("secrets on the box during enrollment", () => {
  it("a process of the sandbox user finds no token or setup code in any environ, argv or home file, and an adopting replay hands over none", {
    timeout: 240_000,
  }, async () => {
    const bodies: string[] = [];
    const recording: typeof fetch = (input, init) => {
      if (typeof init?.body === "string") bodies.push(init.body);
      return h.api.fetch(input, init);
    };
    const provider = h.provider({ fetch: recording });
    const op = operationId();
    const leaseId = await h.leaseOf(op);
    const spec: EnrollmentSpec = { artifact };
    let spy: Command | undefined;

    // The spy starts as soon as the sandbox exists: when the provision asks the gateway for its enrollment.
    const first = h.options(leaseId, spec);
    const begin = first.beginNodeEnrollment;
    if (!begin) throw new Error("the harness offers no enrollment");
    first.beginNodeEnrollment = async () => {
      const sandbox = await Sandbox.get({ ...h.api.credentials, fetch: h.api.fetch, name: sandboxNameOf(leaseId) });
      spy = await sandbox.runCommand({ cmd: "node", args: ["-e", SPY], detached: true });
      return begin();
    };
    const lease = await provider.provision(h.profile, op, first);
    expect(lease.node?.deviceId).toMatch(/^device-/);

    // A restarted gateway replays the operation while the node runs: adopted, and nothing secret leaves.
    const beforeAdopt = bodies.length;
    const adopted = await h.provider({ fetch: recording }).provision(h.profile, op, h.options(leaseId, spec));
    expect(adopted).toEqual(lease);
    const adoptCode = h.setupCodes.at(-1) ?? "";
    const adoptBodies = bodies.slice(beforeAdopt);
    // It did run the program (the secret-free probe) on the box, and sent neither secret with it.
    expect(adoptBodies.filter((body) => body.includes("OPENCLAW_VSB_PLAN"))).toHaveLength(1);
    expect(adoptBodies.filter((body) => body.includes(adoptCode) || body.includes(h.gateway.token))).toHaveLength(0);

    // The node died: the next replay enrolls again, and that one does carry its secrets (to root).
    const [pid] = (await h.sh(leaseId, "pgrep -f '[o]penclaw.mjs connect' || true", true)).split("\n");
    expect(pid).toMatch(/^[0-9]+$/);
    await h.sh(leaseId, `kill ${pid}; while ps -o stat= -p ${pid} | grep -qv Z; do sleep 0.1; done`, true);
    const beforeReenroll = bodies.length;
    const reenrolled = await h.provider({ fetch: recording }).provision(h.profile, op, h.options(leaseId, spec));
    expect(reenrolled.leaseId).toBe(leaseId);
    const reenrollCode = h.setupCodes.at(-1) ?? "no code";
    expect(bodies.slice(beforeReenroll).filter((body) => body.includes(reenrollCode))).toHaveLength(1);

    await h.sh(leaseId, "touch /tmp/spy-stop");
    const report = JSON.parse((await (await spy?.wait())?.stdout()) ?? "{}") as SpyReport;
    expect(report.found).toEqual([]);
    // It was looking: it read environments, and saw a connecting node's argv during the enrollments.
    expect(report.scans).toBeGreaterThan(10);
    expect(report.environs).toBeGreaterThan(0);
    expect(report.sawConnect).toBe(true);
    await provider.destroy({ leaseId, profile: h.profile });
    expect(await h.sandboxExists(leaseId)).toBe(false);
  });
});
