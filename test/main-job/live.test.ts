// Message 1's live phase line (issue 21): the provider's `phase … started|done in N ms|failed after N ms` lines are
// picked out of VM1's gateway log and shown as they appear (a plain line each off a terminal; one line rewritten in
// place on one, cleared before the next regular line); the watcher reads an emulated VM1's log while lines are
// appended to it, shows each new phase line once and in order, and stops promptly. The summary's scheduled-wake
// line and the job's due time and CLI JSON parsing are specified here too.
import { Sandbox } from "@vercel/sandbox";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type LocalSandboxApi, startLocalSandboxApi } from "../../src/emulator/index.js";
import { phaseLines, plainLines, statusOf, terminalLine, watchPhases } from "../../src/main-job/live.js";
import { scheduledWakeLine } from "../../src/main-job/report.js";
import { DUE_AFTER_MS, dueAt, jsonOf } from "../../src/main-job/scheduled.js";
import { GATEWAY_LOG, ROOT } from "../../src/main-job/vm1.js";
import { waitFor } from "../gateway/wait.js";

const LEASE = "vsb_02ed8f534dba7bad";
const line = (rest: string) => `2026-12-01T19:00:00.000Z [plugins] vercel-sandbox ${LEASE}: ${rest}`;

describe("phase lines", () => {
  it("picks the provider's phase lines out of a log, in order, and nothing else", () => {
    const log = [
      line("phase allocate started"),
      line("allocated"),
      line("phase allocate done in 1668 ms"),
      line("phase create or adopt started"),
      line("runtime install 62947 ms"),
      line("phase create or adopt failed after 950 ms"),
      "vercel-sandbox vsb_zz: phase bogus started",
    ].join("\n");
    expect(phaseLines(log)).toEqual([
      { leaseId: LEASE, phase: "allocate", state: "started" },
      { leaseId: LEASE, phase: "allocate", state: "done in 1668 ms" },
      { leaseId: LEASE, phase: "create or adopt", state: "started" },
      { leaseId: LEASE, phase: "create or adopt", state: "failed after 950 ms" },
    ]);
    const [started] = phaseLines(log);
    expect(statusOf(started!)).toBe("VM2 vsb_02ed8f…: phase allocate started");
    expect(statusOf(started!, 41_400)).toBe("VM2 vsb_02ed8f…: phase allocate started (41 s)");
  });

  it("off a terminal each new phase is a plain line; on one, one line is rewritten and cleared at the end", () => {
    const logged: string[] = [];
    const plain = plainLines((l) => logged.push(l));
    plain.update("VM2 x: phase allocate started", true);
    plain.update("VM2 x: phase allocate started (3 s)", false);
    plain.end();
    expect(logged).toEqual(["    ⋯ VM2 x: phase allocate started"]);
    let screen = "";
    const tty = terminalLine({ write: (text: string) => (screen += text) });
    tty.update("VM2 x: phase preparation started", true);
    tty.update("VM2 x: phase preparation started (5 s)", false);
    tty.end();
    tty.end();
    expect(screen).toBe(
      "\r\x1b[2K    ⋯ VM2 x: phase preparation started\r\x1b[2K    ⋯ VM2 x: phase preparation started (5 s)\r\x1b[2K",
    );
    expect(screen).not.toContain("\n");
  });
});

describe("the watcher on an emulated VM1", () => {
  let api: LocalSandboxApi | undefined;
  let box: Sandbox;
  beforeAll(async () => {
    api = await startLocalSandboxApi({});
    box = await Sandbox.create({
      ...api.credentials,
      fetch: api.fetch,
      name: "vm1-live-spec",
      runtime: "node24",
    } as Parameters<typeof Sandbox.create>[0]);
  }, 120_000);
  afterAll(async () => {
    await api?.close();
  }, 60_000);

  it("shows each phase line once, in order, as it is appended to the gateway log, and stops", {
    timeout: 120_000,
  }, async () => {
    const append = async (text: string) => {
      await box.writeFiles([{ path: `${ROOT}/chunk`, content: Buffer.from(`${text}\n`) }]);
      const done = await box.runCommand("sh", [
        "-c",
        `mkdir -p $(dirname ${GATEWAY_LOG}); cat ${ROOT}/chunk >> ${GATEWAY_LOG}`,
      ]);
      expect(done.exitCode).toBe(0);
    };
    await append(line("phase allocate started"));
    const shown: string[] = [];
    const watcher = watchPhases(
      async () => box,
      plainLines((l) => shown.push(l)),
      { intervalMs: 100 },
    );
    await waitFor("the first phase", async () => shown.length === 1 || undefined, {
      timeoutMs: 30_000,
      intervalMs: 50,
    });
    await append(
      [line("allocated"), line("phase allocate done in 12 ms"), line("phase preparation started")].join("\n"),
    );
    await waitFor("the next phases", async () => shown.length === 3 || undefined, {
      timeoutMs: 30_000,
      intervalMs: 50,
    });
    expect(await watcher.stop()).toBe(3);
    await append(line("phase enrollment started"));
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(shown).toEqual([
      "    ⋯ VM2 vsb_02ed8f…: phase allocate started",
      "    ⋯ VM2 vsb_02ed8f…: phase allocate done in 12 ms",
      "    ⋯ VM2 vsb_02ed8f…: phase preparation started",
    ]);
  });

  it("shows only lines after those an earlier watcher saw, and never runs a command on a stopped VM1", {
    timeout: 120_000,
  }, async () => {
    const current = () => Sandbox.get({ ...api!.credentials, fetch: api!.fetch, name: box.name });
    const shown: string[] = [];
    // The log holds four phase lines now (the case above): an earlier message's, as message 3 finds message 1's.
    const skipping = watchPhases(
      current,
      plainLines((l) => shown.push(l)),
      { intervalMs: 100, skip: 4 },
    );
    const done = await box.runCommand("sh", ["-c", `echo '${line("phase worker start started")}' >> ${GATEWAY_LOG}`]);
    expect(done.exitCode).toBe(0);
    await waitFor("the new phase", async () => shown.length > 0 || undefined, { timeoutMs: 30_000, intervalMs: 50 });
    expect(await skipping.stop()).toBe(5);
    expect(shown).toEqual(["    ⋯ VM2 vsb_02ed8f…: phase worker start started"]);

    await box.stop();
    expect((await current()).status).toBe("stopped");
    const asleep: string[] = [];
    const watcher = watchPhases(
      current,
      plainLines((l) => asleep.push(l)),
      { intervalMs: 100 },
    );
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    expect(await watcher.stop()).toBe(0);
    // Fifteen reads' worth of time: a command would have resumed it (and shown its log's lines).
    expect((await current()).status).toBe("stopped");
    expect(asleep).toEqual([]);
  });
});

describe("the scheduled job", () => {
  it("is due a whole second at least DUE_AFTER_MS after it is added", () => {
    expect(dueAt(1_000_000_400)).toBe(1_000_000_000 + DUE_AFTER_MS + 1_000);
    expect(dueAt(1_000_000_000)).toBe(1_000_000_000 + DUE_AFTER_MS);
  });

  it("reads the JSON a CLI printed after its log lines", () => {
    expect(jsonOf<{ id: string }>('{"id":"j1"}')).toEqual({ id: "j1" });
    expect(jsonOf<{ id: string }>('[plugins] loaded\n{\n  "id": "j2"\n}\n')).toEqual({ id: "j2" });
    expect(jsonOf("no json here")).toBeUndefined();
  });

  it("the summary line puts the due time beside when VM1 was woken and when the job ran", () => {
    const due = Date.UTC(2026, 11, 1, 19, 30, 0);
    expect(
      scheduledWakeLine({
        jobId: "j",
        dueAtMs: due,
        firedAtMs: due - 65_000,
        wokenAtMs: due - 41_500,
        ranAtMs: due + 12,
        markerMs: due + 20,
        runStatus: "ok",
      }),
    ).toBe(
      "  scheduled job due 19:30:00.000, VM1 woken at 19:29:18.500, ran at 19:30:00.012 (UTC; timer fired 19:28:55.000, woken 41.5 s before due)",
    );
  });
});
