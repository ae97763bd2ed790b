// The bootstrap program itself, run where it runs: in a sandbox (the emulator), as the account (the secret-free
// runs) or as sandbox root (the run that carries secrets and then becomes the account). What it refuses, it
// refuses before it creates anything in the account's home, and it always ends with a protocol line.
import * as sdk from "@vercel/sandbox";
import { describe, expect, it } from "vitest";
import { fakeEnrollment } from "../../src/conformance/fixtures.js";
import { enrollmentPlan } from "../../src/provider/enrollment/plan.js";
import { BOOTSTRAP_PROGRAM, PROGRAM_ENV } from "../../src/provider/enrollment/program/index.js";
import { outcomeOf, parseEvents, phasesOf } from "../../src/provider/enrollment/protocol.js";
import { connect, useEmulator } from "../emulator/harness.js";

const emulator = useEmulator();
const LEASE = "vsb_0123456789abcdef01234567";
const HOME = "/home/vercel-sandbox";

/** Runs the program in a fresh sandbox from its home; the events it printed and what its home holds afterwards. */
async function runProgram(plan: object, sudo = false) {
  const sandbox = await sdk.Sandbox.create(connect(emulator()));
  try {
    await sandbox.writeFiles([{ path: `${HOME}/bootstrap.mjs`, content: Buffer.from(BOOTSTRAP_PROGRAM) }]);
    const run = await sandbox.runCommand({
      cmd: "node",
      args: [`${HOME}/bootstrap.mjs`],
      env: { [PROGRAM_ENV.plan]: JSON.stringify(plan) },
      cwd: HOME,
      sudo,
    });
    const listing = await sandbox.runCommand("sh", ["-c", `cd ${HOME} && find . -mindepth 1 | sed 's|^\\./||' | sort`]);
    const left = (await listing.stdout()).split("\n").filter(Boolean);
    return { events: parseEvents(await run.stdout()), left };
  } finally {
    await sandbox.delete();
  }
}

describe("bootstrap program", () => {
  for (const [who, sudo] of [
    ["as the account", false],
    ["started as root", true],
  ] as const) {
    it(`${who}, refuses a Node outside the engines before it touches anything, naming the runtime setting`, async () => {
      const { events, left } = await runProgram(
        { ...enrollmentPlan(LEASE, fakeEnrollment()), engines: [{ min: [99, 0, 0] }] },
        sudo,
      );
      const outcome = outcomeOf(events);
      expect(outcome).toMatchObject({ event: "failed", phase: "preparation", code: "node-version" });
      expect(outcome && "message" in outcome ? outcome.message : "").toContain("settings.runtime");
      expect(left).toEqual(["bootstrap.mjs"]);
    });
  }

  it("told the registry is closed, reports a missing runtime before downloading or starting anything", async () => {
    const { events, left } = await runProgram(enrollmentPlan(LEASE, fakeEnrollment(), undefined, false));
    expect(outcomeOf(events)).toMatchObject({ event: "failed", phase: "reuse", code: "runtime-missing" });
    expect(phasesOf(events).map((p) => p.phase)).toEqual(["preparation", "reuse"]);
    expect(left.filter((entry) => !/^(bootstrap\.mjs|\.openclaw-worker(\/node-runtimes)?)$/.test(entry))).toEqual([]);
  });
});
