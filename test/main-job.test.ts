// Issue 12's main job, as `npm start` runs it (shorter idle clock): VM1 on the emulator runs the real gateway with
// the packed plugin; three messages through the host; the scripted model's exec runs on VM2 (the proof file is
// there and not on VM1), the second message reuses the warm VM2, idle puts VM1 to sleep only after the suspend
// handshake (VM2 reclaimed, one checkpoint), a cron job added during the conversation is due after that sleep: the
// reference host's scheduled wake wakes VM1 from the wake snapshot before it is due (no message), the woken gateway
// runs it and records the run (cron.runs), and VM1 sleeps again; the third message wakes VM1 with a fresh gateway
// (message 1's provision phases are shown as they happen), and nothing is left:
// no sandbox, no snapshot, no process, no host address, no secret on VM1's disk or in its checkpoint. The model's
// key exists only on this machine: the model refuses requests without it and VM1's firewall adds it on the way out.
import { execFileSync } from "node:child_process";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Vm1OnDisk } from "../src/main-job/evidence.js";
import { type MainJob, type MainJobResult, startMainJob } from "../src/main-job/run.js";
import { PROGRAM_ENV } from "../src/provider/enrollment/program/index.js";
import { listProcesses } from "./gateway/process-table.js";
import { ensureBuilt } from "./setup/build.js";
import { machineCacheDir } from "./support/machine-cache.js";
import { scanForSecret } from "./support/secret-scan.js";

const lines: string[] = [];
let job: MainJob | undefined;
let result: MainJobResult | undefined;
/** VM1's disk as the emulator holds it, and what scanning it (each root for each secret) found. */
let disk: Vm1OnDisk | undefined;
const scans: Array<{ root: string; secret: string; matches: string[]; filesRead: number }> = [];

// Runs inside the job, before it deletes anything: VM1's checkpoints and its own layer, on this machine.
async function scanVm1(vm1: Vm1OnDisk): Promise<void> {
  disk = vm1;
  for (const root of [...vm1.checkpointDirs, ...vm1.sandboxDirs]) {
    for (const [secret, value] of Object.entries(vm1.secrets)) {
      const { matches, filesRead } = await scanForSecret(root, value);
      scans.push({ root, secret, matches, filesRead });
    }
  }
}

function outcome(): MainJobResult {
  if (!result) throw new Error("the main job did not complete (see beforeAll's output)");
  return result;
}

function descendantsOf(pid: number): number[] {
  const table = listProcesses().filter((p) => p.state !== "Z");
  const found: number[] = [];
  const walk = (parent: number) => {
    for (const child of table.filter((p) => p.ppid === parent)) {
      found.push(child.pid);
      walk(child.pid);
    }
  };
  walk(pid);
  return found;
}

beforeAll(async () => {
  await ensureBuilt(); // the job packs the built package, as `npm start` does after its build
  job = startMainJob({
    log: (line) => lines.push(line),
    timers: { idleAfter: "15s", pollInterval: "1s" },
    inspect: scanVm1,
    // The rerun cache `npm start` keeps in the checkout, kept for the specs in the machine cache instead: a fresh
    // machine builds VM1's image layers and VM2's base runtime image as before; a later run on the machine reuses
    // each layer whose key still matches (the gateway's version, the packed plugin's sha256) and the base image.
    reuse: { dir: path.join(machineCacheDir(), "main-job"), fresh: false },
  });
  try {
    result = await job.done;
  } finally {
    process.stderr.write(`[main job]\n${lines.join("\n")}\n`);
  }
  // The job takes 12-20 minutes on a loaded 2-core machine, and the build before it may wait for another's.
}, 2_700_000);

afterAll(async () => {
  await job?.stop();
}, 300_000);

describe("npm start's main job on the embedded emulator", () => {
  it("every reply carries the output of the command the model ran on VM2, not on VM1", () => {
    const { messages } = outcome();
    expect(messages).toHaveLength(3);
    for (const message of messages) {
      // The product and the worker's random digits come only from running the command: an echo yields neither.
      expect(message.prompt).not.toContain(message.expected);
      expect(message.workerLine).toMatch(new RegExp(`^${message.expected}[0-9a-f]{8}$`));
      expect(message.text).toContain(message.workerLine);
      expect(message.ranOn).toMatch(/\S/);
      expect(message.ranOn).not.toBe(outcome().vm1Name);
      expect(message.onVm1).toBe(false);
    }
  });

  it("the first message creates VM2; the second reuses it and creates no sandbox", () => {
    const [first, second] = outcome().messages;
    expect(first!.sandboxesCreated).toBe(1);
    expect(second!.sandboxesCreated).toBe(0);
    expect(second!.ranOn).toBe(first!.ranOn);
  });

  it("idle: the host sleeps VM1 after a ready suspend; VM2 is reclaimed and VM1 has one checkpoint", () => {
    const { sleep, afterSleep, messages } = outcome();
    // The job waits for a sleep that happened; what it returns is the host's record of it: VM1's checkpoint, kept.
    const first = sleep as { slept: boolean; snapshotId: string; kept: string[] };
    expect(first.snapshotId).toMatch(/^snap_/);
    expect(first.kept).toEqual([first.snapshotId]);
    expect(afterSleep.vm1Status).toBe("stopped");
    expect(afterSleep.sandboxes).not.toContain(messages[0]!.ranOn);
    expect(afterSleep.sandboxes).toEqual([]);
    expect(afterSleep.checkpoints).toBe(1);
  });

  it("message 1's provision phases are shown while it runs, each as it starts, before its reply", () => {
    outcome();
    const replied = lines.findIndex((line) => line.startsWith("✓ Message 1 (cold)"));
    const live = (phase: string) =>
      lines.findIndex((line) => new RegExp(`^ {4}⋯ VM2 vsb_[0-9a-f]{6}…: phase ${phase} started$`).test(line));
    expect(live("allocate")).toBeGreaterThan(lines.findIndex((line) => line.startsWith("▶ Message 1 (cold)")));
    expect(live("preparation")).toBeGreaterThan(live("allocate"));
    expect(live("enrollment")).toBeGreaterThan(live("preparation"));
    expect(replied).toBeGreaterThan(live("enrollment"));
    expect(lines.some((line) => /^ {4}⋯ VM2 vsb_[0-9a-f]{6}…: phase preparation done in [0-9]+ ms$/.test(line))).toBe(
      true,
    );
  });

  it("message 3's live phases are its new VM2's alone, none of message 1's again", () => {
    outcome();
    const liveLeases = (name: string) => {
      const from = lines.findIndex((line) => line.startsWith(`▶ ${name}`));
      const to = lines.findIndex((line) => line.startsWith(`✓ ${name}`));
      return lines
        .slice(from, to)
        .map((line) => /^ {4}⋯ VM2 (vsb_[0-9a-f]{6})…: phase /.exec(line)?.[1])
        .filter((lease) => lease !== undefined);
    };
    const first = new Set(liveLeases("Message 1 (cold)"));
    const third = liveLeases("Message 3");
    expect(first.size).toBe(1);
    expect(third.length).toBeGreaterThan(0);
    expect(new Set(third).size).toBe(1);
    expect(first.has(third[0]!)).toBe(false);
  });

  it("scheduled wake: the host wakes the sleeping VM1 before the cron job is due, the woken gateway runs it, VM1 sleeps again", () => {
    const { scheduled, afterSleep, sleep } = outcome();
    expect(afterSleep.vm1Status).toBe("stopped");
    // The job is the only one the gateway asked to be woken for (its dreaming sweep is off): no other job's wake
    // comes first, whatever time of day the job runs.
    expect(scheduled.otherWakes).toEqual([]);
    // Woken by the host's timer (no message was in flight), after the sleep and before the job was due.
    expect(scheduled.wokenAtMs).toBeGreaterThan(scheduled.asleepAtMs);
    expect(scheduled.wokenAtMs).toBeLessThan(scheduled.dueAtMs);
    // The woken gateway ran it when due, and recorded the run; the job's own line on VM1's disk says the same.
    expect(scheduled.runStatus).toBe("ok");
    expect(scheduled.ranAtMs).toBeGreaterThanOrEqual(scheduled.dueAtMs);
    expect(scheduled.markerMs).toBeGreaterThanOrEqual(scheduled.dueAtMs);
    // ... before VM1 slept again (the third message then woke it): a second checkpoint, kept beside the first (the
    // newest two are kept).
    const second = scheduled.secondSleep as { snapshotId: string; kept: string[] };
    expect(second.snapshotId).toMatch(/^snap_/);
    expect(second.snapshotId).not.toBe((sleep as { snapshotId: string }).snapshotId);
    expect(second.kept).toEqual([second.snapshotId, (sleep as { snapshotId: string }).snapshotId]);
    expect(scheduled.secondSleptAtMs).toBeGreaterThan(Math.max(scheduled.ranAtMs, scheduled.markerMs));
    const at = (ms: number) => new Date(ms).toISOString().slice(11, 23);
    expect(lines).toContainEqual(
      expect.stringMatching(
        new RegExp(
          `^ {2}scheduled job due ${at(scheduled.dueAtMs)}, VM1 woken at ${at(scheduled.wokenAtMs)}, ran at ${at(scheduled.ranAtMs)} `,
        ),
      ),
    );
  });

  it("the third message wakes VM1 from its checkpoint with a fresh gateway process and gets a reply", () => {
    const { messages, gatewayInstances } = outcome();
    expect(messages[0]!.woke).toBe(false);
    expect(messages[2]!.woke).toBe(true);
    expect(gatewayInstances.afterWake).not.toBe(gatewayInstances.beforeSleep);
  });

  it("no secret is in VM1's checkpoint or its own layer: gateway, Vercel and notify tokens, what it handed VM2", () => {
    outcome();
    if (!disk) throw new Error("the job did not hand VM1's disk over for the scan");
    const names = Object.keys(disk.secrets);
    expect(names).toEqual(expect.arrayContaining(["gatewayToken", "vercelToken", "notifySecret", "modelKey"]));
    // The setup code and bootstrap token the plugin on VM1 sent to VM2 are scanned for too.
    for (const variable of [PROGRAM_ENV.token, PROGRAM_ENV.setupCode]) {
      expect(names.some((name) => name.startsWith(`${variable}#`))).toBe(true);
    }
    // Two sleeps (the idle one and the one after the scheduled job): the host keeps both checkpoints.
    expect(disk.checkpointDirs).toHaveLength(2);
    expect(disk.sandboxDirs).toHaveLength(1);
    const roots = [...disk.checkpointDirs, ...disk.sandboxDirs];
    expect(scans).toHaveLength(roots.length * names.length);
    // Snapshots are layered: each checkpoint holds what changed since the one before, VM1's own layer what changed
    // since the last. Every checkpoint holds files, and together they hold VM1's gateway state, config and logs:
    // the scan read them, so no match means something. VM1's own layer holds only what it wrote since its last wake
    // and may hold nothing (test/main-job/disk.test.ts proves the scan reads each kind of layer).
    for (const root of disk.checkpointDirs)
      expect(Math.min(...scans.filter((s) => s.root === root).map((s) => s.filesRead)), root).toBeGreaterThan(0);
    for (const name of names) {
      const read = scans.filter((s) => s.secret === name).reduce((sum, s) => sum + s.filesRead, 0);
      expect(read, name).toBeGreaterThan(20);
    }
    expect(
      scans.filter((s) => s.matches.length > 0).map((s) => `${s.secret} in ${s.root}: ${s.matches.join(", ")}`),
    ).toEqual([]);
  });

  it("the model key reached the model only through VM1's firewall: every model request carried it, VM1 held none", () => {
    const { summary } = outcome();
    if (!disk) throw new Error("the job did not hand VM1's disk over for the scan");
    const key = disk.secrets.modelKey;
    expect(key).toMatch(/^sk-model-[0-9a-f]{48}$/);
    // Three replies, each at least a tool call and its answer: all answered with the key, none refused.
    expect(summary.modelKey.answered).toBeGreaterThanOrEqual(6);
    expect(summary.modelKey.refused).toBe(0);
    expect(summary.modelKey.filesOnVm1).toEqual([]);
    expect(summary.modelKey.checkpoints).toBe(2);
    expect(lines).toContain(
      `  model key: injected by VM1's firewall into ${summary.modelKey.answered} model request(s) (0 refused without it); found on no disk of VM1 (its own layer and 2 checkpoint(s))`,
    );
    // The job's own output never shows it (the key is registered for redaction).
    expect(lines.join("\n")).not.toContain(key);
  });

  it("no secret reached VM1's gateway tree, and the summary reports phases and nothing left behind", () => {
    const { secretsOnVm1, summary } = outcome();
    expect(secretsOnVm1).toEqual([]);
    expect(summary).toMatchObject({ sandboxesLeft: 0, snapshotsLeft: 0, kept: false });
    expect(summary.phases.every((p) => p.ok)).toBe(true);
    expect(lines.some((line) => /^ {2}cold first reply .* wake to reply/.test(line))).toBe(true);
  });

  it("the closing note splits the sleep: until the notification the host acted on, then until VM1 was asleep", () => {
    const { sleepSplit } = outcome();
    expect(sleepSplit.idleMs).toBeGreaterThan(0);
    // The handshake and the checkpoint take time.
    expect(sleepSplit.beyondMs).toBeGreaterThan(0);
    const line = lines.find((l) => /^ {2}cold first reply /.test(l));
    expect(line).toMatch(
      / · sleep \d+\.\d s \(until the notification \d+\.\d s(, \d+ attempt\(s\) refused)?; then asleep in \d+\.\d s\) · /,
    );
  });

  it("after the job no process it started is running and its host address is gone", () => {
    outcome();
    expect(descendantsOf(process.pid)).toEqual([]);
    const links = execFileSync("ip", ["-o", "link", "show"], { encoding: "utf8" });
    expect(links).not.toContain(`vsbjob-${process.pid.toString(36)}`);
  });
});
