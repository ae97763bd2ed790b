// The main job (`npm start`): seed 000's whole cycle on this machine, on the embedded emulator, one progress
// line per phase with its duration. VM1 is built the way a user would build it; the host hands three messages
// over; the second must reuse the warm VM2 and adds a cron job; idle then puts VM1 to sleep, the host's scheduled
// wake wakes it before the job is due and the job runs in the woken gateway; VM1 sleeps again, and the third
// message wakes it.
import { randomBytes, randomInt } from "node:crypto";
import path from "node:path";
import { Sandbox, Snapshot } from "@vercel/sandbox";
import { listCheckpoints } from "../host/index.js";
import { createOwnedTempDir, redact, registerSecret } from "../infra/index.js";
import type { WakeEvent } from "../reference-host/index.js";
import { type BasePlan, baseLine, frontOf, planBase, readyBases, seededStore } from "./base-reuse.js";
import { openCache, type RerunCache } from "./cache.js";
import { approvalsAllowed, approverLine, installCodex } from "./codex.js";
import { CODEX_PLUGIN_SPEC } from "./codex-config.js";
import {
  expectedProof,
  filesHolding,
  gatewayInstance,
  proofCommand,
  proofsOn,
  runtimeArchives,
  secretsOnDisk,
  type Vm1OnDisk,
  vm1OnDisk,
  workerSteps,
} from "./evidence.js";
import { JobHost, type Reply } from "./host.js";
import { type LiveLine, plainLines, watchPhases } from "./live.js";
import { RUN_PREFIX } from "./model.js";
import { packPlugin } from "./package.js";
import { pollUntil } from "./poll.js";
import { closingNote, type Log, Progress, type SleepSplit, type Summary, seconds, summaryLines } from "./report.js";
import { RUN_MARKER } from "./responses.js";
import { type CachedBase, type ImagePlan, keptSnapshots, planImage, type ReuseRecord, reuseLine } from "./reuse.js";
import {
  addScheduledJob,
  cronRuns,
  dueAt,
  HOST_WAKE_AHEAD_MS,
  markerTimes,
  ScheduledJobError,
  type ScheduledWake,
} from "./scheduled.js";
import { type Services, startServices } from "./services.js";
import { Teardown } from "./teardown.js";
import {
  type AgentMode,
  baseConfig,
  DEMO_TIMERS,
  GATEWAY_PORT,
  gatewayVersionFor,
  jobConfigPatch,
  type Timers,
  vm1NetworkPolicy,
  WAKE_LEAD,
} from "./topology.js";
import * as vm1 from "./vm1.js";
import {
  buildGatewayImage,
  buildPluginImage,
  gatewayImageInputs,
  pluginImageInputs,
  VM1_LOG_FILE,
  VM1_RUNTIME,
} from "./vm1-image.js";

export interface MainJobOptions {
  log?: Log;
  timers?: Timers;
  keep?: boolean;
  /**
   * Called once the third reply is in, before anything is deleted, with where VM1's disk and its checkpoints are on
   * this machine and every secret in play (a spec scans them; the job itself checks VM1's gateway tree).
   */
  inspect?: (vm1: Vm1OnDisk) => Promise<void>;
  /** Where message 1's current provision phase is shown live (default: a plain line per phase in the log). */
  live?: LiveLine;
  /**
   * The rerun cache (`npm start`): the emulator's store and VM1's image kept in `dir` between runs, reused when
   * their key matches; `fresh` discards it first. Default: none (every run starts from nothing, as the spec does).
   */
  reuse?: { dir: string; fresh: boolean };
  /** `codex`: Codex on VM1 runs its commands on VM2 by remote-exec (newest gateway with the Codex plugin). */
  mode?: AgentMode;
}

export interface MessageOutcome extends Reply {
  /** The message handed to VM1. */
  prompt: string;
  proof: string;
  /** What only running the command yields: `<proof> <the product it computes> ` (the product is in no prompt). */
  expected: string;
  /** The line the command wrote to the proof file on the worker that ran it (undefined: none did). */
  workerLine?: string;
  /** Sandboxes the API created while this message was handled. */
  sandboxesCreated: number;
  /** The worker sandbox that holds the proof (undefined: none did). */
  ranOn?: string;
  /** Whether VM1 holds the proof too (it must not: the command runs on VM2). */
  onVm1: boolean;
}

export interface MainJobResult {
  vm1Name: string;
  messages: MessageOutcome[];
  sleep: unknown;
  /** The first sleep's time: until the notification the host acted on, then until VM1 was asleep. */
  sleepSplit: SleepSplit;
  afterSleep: { vm1Status: string; sandboxes: string[]; checkpoints: number };
  /** The cron job the host woke VM1 for, when the first sleep ended, and the sleep after the job's run (epoch ms). */
  scheduled: ScheduledWake & {
    asleepAtMs: number;
    secondSleep: unknown;
    secondSleptAtMs: number;
    /** Other jobs in the host's wake snapshot when VM1 first slept (the gateway's own; the job's config has none). */
    otherWakes: Array<{ jobId: string; runAtMs: number }>;
  };
  gatewayInstances: { beforeSleep: string; afterWake: string };
  secretsOnVm1: string[];
  summary: Summary;
}

export interface MainJob {
  done: Promise<MainJobResult>;
  /** Ends everything the job started (Ctrl-C); resolves with the teardown steps that failed. */
  stop(): Promise<string[]>;
}

const CREATE = /^\/v[23]\/sandboxes\/?$/;

export function startMainJob(options: MainJobOptions = {}): MainJob {
  const write = options.log ?? ((line: string) => process.stdout.write(`${line}\n`));
  // Every line is redacted: the model's key is registered as a secret (services.ts).
  const log = (line: string) => write(redact(line));
  const teardown = new Teardown();
  return { done: runMainJob(options, log, teardown), stop: () => teardown.run(log) };
}

async function runMainJob(options: MainJobOptions, log: Log, teardown: Teardown): Promise<MainJobResult> {
  const progress = new Progress(log);
  const started = performance.now();
  const timers = options.timers ?? DEMO_TIMERS;
  const mode = options.mode ?? "worker-turn";
  // Holds the API front's keys, the packed plugin and the emulator's data dir; removed last, or on exit.
  const jobDir = await createOwnedTempDir("vsb-main-job-");
  const tmp = jobDir.path;
  teardown.add("remove the job's temp dir", () => jobDir.remove());
  let completed = false;
  const cache = options.reuse ? await openCache(options.reuse.dir, options.reuse.fresh) : undefined;
  if (options.reuse && !cache)
    progress.note(`the rerun cache ${options.reuse.dir} is in use by another run: none used`);
  if (cache) teardown.add("release the rerun cache", () => cache.release());
  try {
    const store = cache && {
      dataDir: cache.emulatorDir,
      restore: keptSnapshots(cache.record, cache.fresh),
      ...(cache.record?.front && !cache.fresh ? { front: cache.record.front } : {}),
    };
    const services = await progress.phase("Start the emulator and this machine's services", () =>
      startServices(teardown, tmp, store),
    );
    const { api, connection } = services;
    progress.note(`Vercel API (emulator) ${api.url}, reached from VM1 as ${services.front.url}`);
    progress.note(
      `scripted model ${services.model.baseUrl} (refuses requests without its key; VM1's firewall adds it)`,
    );
    const secrets = { gatewayToken: hex(), vercelToken: api.credentials.token, notifySecret: hex() };
    // Redacted from every line the job prints (a gateway log tail included).
    for (const secret of Object.values(secrets)) registerSecret(secret);
    const creates = () =>
      api.requests().filter((r) => r.method === "POST" && CREATE.test(r.path) && r.status < 300).length;
    const sandboxes = async () => (await Sandbox.list({ ...connection })).toArray();
    const snapshots = async () =>
      (await (await Snapshot.list({ ...connection } as Parameters<typeof Snapshot.list>[0])).toArray()).filter(
        (s) => s.status !== "deleted",
      );
    // What the next run finds in the cache: this run's VM1 image, API front and base images (saved as they are made).
    const next: ReuseRecord = { format: 1, front: frontOf(services.front.url) };
    // The rerun cache's images outlive the run; every other snapshot and every sandbox goes. Kept: what this run
    // recorded for the next one and, until its end replaces the record whole, what the last run kept, so a failed
    // or interrupted run (the teardown's deleteAll) leaves the cache it found (a layer it replaced goes at the
    // next run's start, which loads only what the record names).
    let lastRunKept: readonly string[] = services.api.restored;
    const cached = () => new Set([...lastRunKept, ...keptSnapshots(next, false)]);
    const deleteAll = async () => {
      const keep = cached();
      for (const s of await sandboxes()) await (await Sandbox.get({ ...connection, name: s.name })).delete();
      for (const s of await snapshots()) {
        if (!keep.has(s.id)) await (await Snapshot.get({ ...connection, snapshotId: s.id })).delete();
      }
    };
    // On Vercel these would outlive the job; the emulator ends them with its close anyway.
    teardown.add("delete every sandbox and snapshot", () => (options.keep ? Promise.resolve() : deleteAll()));

    const plugin = await progress.phase("Pack this checkout's plugin (npm pack)", () => packPlugin(tmp));
    progress.note(`${plugin.fileName}, ${Math.round(plugin.bytes.length / 1024)} KiB`);
    const image = cache ? await vm1Image(progress, services, plugin, cache, next, mode) : undefined;
    const basePlan: BasePlan | undefined =
      cache &&
      planBase(cache.record, frontOf(services.front.url), { fresh: cache.fresh, available: services.api.restored });
    if (basePlan) {
      progress.note(
        "offer" in basePlan
          ? `offering the kept base runtime image(s) to VM1's store: ${basePlan.offer.map((b) => `${b.snapshotId} (key ${b.key.slice(0, 12)})`).join(", ")}`
          : `no base runtime image offered to VM1's store: ${basePlan.none}`,
      );
    }
    const { box, host, publicOrigin } = await buildVm1(
      progress,
      services,
      secrets,
      plugin,
      timers,
      teardown,
      mode,
      image?.snapshotId,
      basePlan && "offer" in basePlan ? seededStore(basePlan.offer) : undefined,
    );

    const messages: MessageOutcome[] = [];
    const send = async (label: string) => {
      const proof = `proof-${hex(4)}`;
      const [a, b] = [randomInt(10_000, 100_000), randomInt(10_000, 100_000)];
      const before = creates();
      const prompt = `${mode === "codex" ? `${RUN_MARKER} ` : RUN_PREFIX}${proofCommand(proof, a, b)}`;
      const sentAtMs = Date.now();
      const reply = await host.message(prompt).catch(async (error: unknown) => {
        // What VM1's gateway printed last says more than the refusal does.
        const tail = await vm1
          .sh(await host.vm1(), "read the gateway's output", `tail -n 30 ${vm1.GATEWAY_LOG} 2>/dev/null || true`)
          .catch(() => "");
        for (const line of tail.trim().split("\n").filter(Boolean)) progress.note(`gateway: ${line.slice(0, 400)}`);
        throw error;
      });
      const outcome = await locateProof(
        reply,
        { prompt, proof, expected: expectedProof(proof, a, b) },
        creates() - before,
      );
      messages.push(outcome);
      progress.note(`reply: ${JSON.stringify(reply.text.slice(0, 160))}`);
      const parts = [
        reply.woke && `waking VM1 ${seconds(reply.wakeMs)}`,
        reply.placeMs > 0 && `placing the session on VM2 ${seconds(reply.placeMs)}`,
      ];
      if (parts.some(Boolean)) progress.note(`of which ${parts.filter(Boolean).join(", ")}`);
      // A gateway process builds core's node runtime archive at its first dispatch (a woken one again).
      for (const archive of (await runtimeArchives(await host.vm1())).filter((x) => x.startedMs >= sentAtMs - 1000)) {
        progress.note(
          `core built the node runtime archive for this gateway process in ${seconds(archive.doneMs - archive.startedMs)}, from ${seconds(Math.max(0, archive.startedMs - sentAtMs))} after the message was handed over`,
        );
      }
      progress.note(
        `${proof} found on ${outcome.ranOn ?? "no worker"}${outcome.onVm1 ? " AND on VM1" : ""}; sandboxes created: ${outcome.sandboxesCreated}`,
      );
      if (!outcome.workerLine || !reply.text.includes(outcome.workerLine)) {
        throw new Error(`${label}: the reply does not carry the worker's output`);
      }
      if (!outcome.ranOn || outcome.onVm1) throw new Error(`${label}: the command did not run on VM2 alone`);
      return outcome;
    };
    const locateProof = async (
      reply: Reply,
      sent: { prompt: string; proof: string; expected: string },
      created: number,
    ): Promise<MessageOutcome> => {
      let ranOn: string | undefined;
      let workerLine: string | undefined;
      for (const s of await sandboxes()) {
        if (s.name === box.name || s.status !== "running") continue;
        const line = (await proofsOn(await Sandbox.get({ ...connection, name: s.name })))
          .split("\n")
          .find((l) => l.startsWith(`${sent.proof} `));
        if (line !== undefined) [ranOn, workerLine] = [s.name, line];
      }
      const onVm1 = (await proofsOn(await host.vm1())).includes(sent.proof);
      return { ...reply, ...sent, sandboxesCreated: created, onVm1, ...(ranOn ? { ranOn, workerLine } : {}) };
    };

    const phases = watchPhases(() => host.vm1(), options.live ?? plainLines(log));
    let phasesShown = 0;
    await progress
      .phase("Message 1 (cold): session placed on VM2, the model's exec runs there", () => send("message 1"))
      .finally(async () => {
        phasesShown = await phases.stop();
      });
    const stepsBefore = await workerSteps(await host.vm1());
    for (const step of stepsBefore) progress.note(`VM2 ${step}`);
    await progress.phase("Message 2 (warm): same VM2, no new sandbox", () => send("message 2"));
    if (messages[1]!.ranOn !== messages[0]!.ranOn || messages[1]!.sandboxesCreated !== 0) {
      throw new Error("message 2 did not reuse the warm VM2");
    }
    const beforeSleep = await gatewayInstance(publicOrigin, secrets.gatewayToken);
    const dueAtMs = dueAt(Date.now());
    const jobId = await progress.phase("Cron job added (automations add → cron.add), due after VM1 sleeps", async () =>
      addScheduledJob(await host.vm1(), secrets.gatewayToken, dueAtMs),
    );
    progress.note(
      `job ${jobId} due ${new Date(dueAtMs).toISOString()}; gateway wakeLead ${WAKE_LEAD}, host lead ${HOST_WAKE_AHEAD_MS / 1000} s`,
    );

    const idleFromMs = Date.now();
    const firstSleep = await progress.phase(
      `Idle ${timers.idleAfter}: notify → suspend (VM2 reclaimed) → VM1 checkpoint`,
      () => pollUntil("the host to put VM1 to sleep", async () => host.slept()[0], 600_000),
    );
    // The suspend route rechecks the gateway's work under its lock: an attempt it refused (work still running when
    // the host's deadline passed) is not a failure; the plugin notifies again while sleep stays due.
    const refusedSleeps = host.sleeps.slice(0, host.sleeps.indexOf(firstSleep));
    for (const refused of refusedSleeps) progress.note(`host: sleep not taken: ${JSON.stringify(refused.outcome)}`);
    const sleep = firstSleep.outcome;
    const sleepSplit = {
      idleMs: firstSleep.notifiedAtMs - idleFromMs,
      beyondMs: firstSleep.endedAtMs - firstSleep.notifiedAtMs,
      refused: refusedSleeps.length,
    };
    const afterSleep = {
      vm1Status: (await host.vm1()).status,
      sandboxes: (await sandboxes()).filter((s) => s.status === "running").map((s) => s.name),
      checkpoints: (await listCheckpoints(connection, box.name)).filter((s) => s.status === "created").length,
    };
    progress.note(`host: ${JSON.stringify(sleep)}`);
    progress.note(
      `VM1 ${afterSleep.vm1Status}; running sandboxes: ${afterSleep.sandboxes.length}; VM1 checkpoints: ${afterSleep.checkpoints}`,
    );
    // The host keeps the gateway's whole wake list and sets one timer, for the soonest job: another job of the
    // gateway due first is woken for first, and the timer is set for this one after it.
    const keptWakes = (await host.keptWake())?.snapshot.wakes ?? [];
    if (!keptWakes.some((wake) => wake.jobId === jobId)) {
      throw new ScheduledJobError(
        "the host's wake snapshot does not list the cron job (the gateway asked no wake for it)",
      );
    }
    const otherWakes = keptWakes
      .filter((wake) => wake.jobId !== jobId)
      .map((wake) => ({ jobId: wake.jobId, runAtMs: wake.runAtMs }));
    for (const other of otherWakes) {
      progress.note(
        `host: the gateway also asks to be awake for job ${other.jobId} due ${new Date(other.runAtMs).toISOString()}`,
      );
    }
    const armed = host.wakes.findLast((event) => event.kind === "armed");
    if (armed?.kind !== "armed") throw new ScheduledJobError("the host set no wake timer after VM1 slept");
    progress.note(
      `host: wake timer set for ${new Date(armed.atMs).toISOString()} (${armed.jobId === jobId ? "the job" : `job ${armed.jobId}, due first`})`,
    );

    const woken = await progress.phase(
      "Scheduled wake: the host wakes VM1 from the wake snapshot, the job runs, VM1 sleeps again",
      async () => {
        const event = (await pollUntil(
          "the host's scheduled wake of VM1",
          async () => host.wakes.find((e) => e.kind === "woke" && e.jobId === jobId),
          300_000,
        )) as Extract<WakeEvent, { kind: "woke" }>;
        // The one-shot job's timer fires once: VM1 still awake then (asleep too late for the job's lead) means the
        // gateway ran the job itself and no wake of VM1 for it will come. Said now, not after the next poll's bound.
        if (!event.woke) {
          throw new ScheduledJobError(
            `the host's timer for the job fired at ${new Date(event.firedAtMs).toISOString()} while VM1 was awake (asleep at ${new Date(firstSleep.endedAtMs).toISOString()}, ${refusedSleeps.length} sleep(s) refused before)`,
          );
        }
        const again = await pollUntil(
          "the host to put VM1 to sleep again after the job",
          async () => host.slept().find((sleep) => sleep.endedAtMs > event.awakeAtMs),
          600_000,
        );
        return { ...event, again };
      },
    );
    const { outcome: secondSleep, endedAtMs: secondSleptAtMs } = woken.again;
    progress.note(`host: woke VM1 in ${seconds(woken.ms)}, then ${JSON.stringify(secondSleep)}`);

    // A new VM2 for the woken gateway (suspend reclaimed the first): its provision phases, live and after.
    const phases3 = watchPhases(() => host.vm1(), options.live ?? plainLines(log), { skip: phasesShown });
    await progress
      .phase("Message 3: wakes VM1 from its checkpoint (fresh gateway), reply", () => send("message 3"))
      .finally(() => phases3.stop());
    const stepsAfter = await workerSteps(await host.vm1());
    for (const step of stepsAfter.slice(stepsBefore.length)) progress.note(`VM2 ${step}`);
    let agent = `OpenClaw's agent, its commands on VM2 by worker-turn (openclaw ${gatewayVersionFor(mode)})`;
    if (mode === "codex") {
      // Each remote-exec attempt launches Codex's managed exec-server on VM2 after an approval of its own (a
      // worker-turn placement asks none): VM1's approvals client allowed each once.
      const allowed = await approvalsAllowed(await host.vm1());
      progress.note(`exec-server launches approved (allow-once): ${allowed}`);
      if (allowed < messages.length) {
        throw new Error(
          `${allowed} exec-server launch(es) approved for ${messages.length} messages: not every command ran by remote-exec`,
        );
      }
      agent = `Codex (app-server on VM1), its commands on VM2 by remote-exec (openclaw ${gatewayVersionFor(mode)}, ${CODEX_PLUGIN_SPEC}); ${allowed} exec-server launch(es) approved`;
    }
    const afterWake = await gatewayInstance(publicOrigin, secrets.gatewayToken);
    const runs = await cronRuns(await host.vm1(), secrets.gatewayToken, jobId);
    const [marker] = await markerTimes(await host.vm1());
    const run = runs[0];
    if (!run || marker === undefined) throw new ScheduledJobError(`the woken gateway recorded no run of ${jobId}`);
    const scheduled = {
      jobId,
      dueAtMs,
      firedAtMs: woken.firedAtMs,
      wokenAtMs: woken.awakeAtMs,
      ranAtMs: run.runAtMs ?? run.ts,
      markerMs: marker,
      runStatus: run.status ?? "unknown",
      asleepAtMs: firstSleep.endedAtMs,
      secondSleep,
      secondSleptAtMs,
      otherWakes,
    };
    progress.note(
      `cron.runs: ${runs.length} run(s) of ${jobId}, ${scheduled.runStatus}; the job wrote ${new Date(marker).toISOString()} on VM1`,
    );
    progress.note(`gateway instance ${beforeSleep} before the sleep, ${afterWake} after the wake`);
    const secretsOnVm1 = await secretsOnDisk(await host.vm1(), [...Object.values(secrets), services.modelKey]);
    progress.note(`secrets on VM1's disk: ${secretsOnVm1.length === 0 ? "none" : secretsOnVm1.join(", ")}`);
    // Every checkpoint VM1 ever had, deleted ones too: with layered snapshots a deleted checkpoint's layer stays on
    // disk while a later one stands on it (vm1OnDisk keeps the directories that still exist).
    const checkpoints = await listCheckpoints(connection, box.name);
    const handedOver = services.front.handedOver().map((h, i) => [`${h.name}#${i + 1}`, h.value] as const);
    const vm1Disk = await vm1OnDisk(
      services.dataDir,
      box.name,
      checkpoints.map((c) => c.id),
      { ...secrets, modelKey: services.modelKey, ...Object.fromEntries(handedOver) },
    );
    const modelKey = {
      answered: services.model.completions(),
      refused: services.model.refused(),
      filesOnVm1: await filesHolding([...vm1Disk.sandboxDirs, ...vm1Disk.checkpointDirs], services.modelKey),
      checkpoints: vm1Disk.checkpointDirs.length,
    };
    progress.note(
      `model key: in ${modelKey.filesOnVm1.length} file(s) of VM1's layer and ${modelKey.checkpoints} checkpoint(s); the model answered ${modelKey.answered} request(s) carrying it, refused ${modelKey.refused}`,
    );
    if (modelKey.filesOnVm1.length > 0)
      throw new Error(`the model key is on VM1's disk: ${modelKey.filesOnVm1.join(", ")}`);
    if (image) {
      // VM1's image layers are under every checkpoint: none of this run's secrets may be in them (built before the
      // gateway ever got one; reused ones by an earlier run, whose secrets are gone with it).
      const imageDirs = image.layers.map((l) => path.join(services.dataDir, "snapshots", l.snapshotId));
      const inImage: string[] = [];
      for (const [name, value] of Object.entries(vm1Disk.secrets)) {
        if ((await filesHolding(imageDirs, value)).length > 0) inImage.push(name);
      }
      progress.note(
        `secrets in VM1's image layers ${image.layers.map((l) => l.snapshotId).join(", ")}: ${inImage.length === 0 ? "none" : inImage.join(", ")}`,
      );
      if (inImage.length > 0) throw new Error(`secrets in VM1's image: ${inImage.join(", ")}`);
    }
    if (options.inspect) await options.inspect(vm1Disk);
    let keptBases: CachedBase[] = [];
    if (cache) {
      keptBases = await keepBaseImages(
        await host.vm1(),
        services,
        (await snapshots()).map((s) => s.id),
        vm1Disk.secrets,
      );
      next.base = keptBases;
      await cache.save(next);
      lastRunKept = [];
      progress.note(
        `base runtime image(s) kept for the next run: ${keptBases.map((b) => b.snapshotId).join(", ") || "none"} (no secret of this run in them)`,
      );
    }

    progress.note(
      `before teardown: ${(await sandboxes()).length} sandbox(es), ${(await snapshots()).length} snapshot(s) (VM1 checkpoints and worker images)`,
    );
    const teardownPhase = options.keep ? "Count what is kept (--keep)" : "Teardown: delete sandboxes and snapshots";
    const left = await progress.phase(teardownPhase, async () => {
      if (!options.keep) await deleteAll();
      return {
        sandboxes: (await sandboxes()).length,
        snapshots: (await snapshots()).filter((s) => !cached().has(s.id)).length,
      };
    });
    const summary: Summary = {
      phases: progress.phases,
      apiRequests: api.requests().length,
      sandboxesCreated: creates(),
      sandboxesLeft: left.sandboxes,
      snapshotsLeft: left.snapshots,
      totalMs: Math.round(performance.now() - started),
      ...(image
        ? {
            reuse: [
              ...image.layers.map((l) => reuseLine(l.name, l.plan, l.captured)),
              ...(basePlan
                ? [
                    baseLine(
                      basePlan,
                      stepsBefore.some((l) => / runtime install /.test(l)),
                      keptBases,
                    ),
                  ]
                : []),
              `  kept for the next run: ${cached().size} image(s) in ${cache!.dir}`,
            ],
          }
        : {}),
      kept: options.keep === true,
      agent,
      modelKey,
      scheduledWake: scheduled,
    };
    for (const line of [
      ...summaryLines(summary),
      ...closingNote(
        messages.map((m) => m.ms),
        progress,
        sleepSplit,
      ),
    ])
      log(line);
    completed = true;
    return {
      vm1Name: box.name,
      messages,
      sleep,
      sleepSplit,
      afterSleep,
      scheduled,
      gatewayInstances: { beforeSleep, afterWake },
      secretsOnVm1,
      summary,
    };
  } finally {
    // With --keep a completed job stays up until the caller stops it (Ctrl-C).
    if (!(completed && options.keep)) await teardown.run(log);
  }
}

async function buildVm1(
  progress: Progress,
  services: Services,
  secrets: vm1.GatewaySecrets,
  plugin: { fileName: string; bytes: Buffer },
  timers: Timers,
  teardown: Teardown,
  mode: AgentMode,
  fromImage?: string,
  seedStore?: string,
) {
  const { connection, address } = services;
  const networkPolicy = vm1NetworkPolicy({
    hostAddress: address,
    modelBaseUrl: services.model.baseUrl,
    modelKey: services.modelKey,
  });
  const source = fromImage ? { source: { type: "snapshot", snapshotId: fromImage } } : { runtime: VM1_RUNTIME };
  const box = await progress.phase(
    fromImage ? "VM1: create the sandbox from VM1's image" : "VM1: create the sandbox",
    () =>
      Sandbox.create({
        ...connection,
        name: `vm1-${hex(3)}`,
        ...source,
        ports: [GATEWAY_PORT],
        timeout: 45 * 60_000,
        // The registry, the host address where "Vercel" and the host answer, and the model's own address, whose
        // rule adds the model's key on the way out (set again at every wake).
        networkPolicy,
      } as Parameters<typeof Sandbox.create>[0]),
  );
  const publicOrigin = box.domain(GATEWAY_PORT);
  progress.note(`${box.name}; its gateway port is exposed at ${publicOrigin}`);
  const host = new JobHost({
    address,
    connection,
    vmName: box.name,
    port: GATEWAY_PORT,
    publicOrigin,
    secrets,
    networkPolicy,
    ...(mode === "codex" ? { prelude: approverLine(GATEWAY_PORT), via: "chat-send" as const } : {}),
  });
  await host.start();
  teardown.add("stop the host", () => host.close());
  const logFile = VM1_LOG_FILE;
  const version = gatewayVersionFor(mode);
  if (!fromImage) {
    await progress.phase(`VM1: npm install openclaw@${version} from the npm registry`, () =>
      vm1.installOpenClaw(box, services.front.caPem, version),
    );
  }
  const configure = fromImage
    ? "VM1: this run's API CA and origin; profile, model, idle clock"
    : "VM1: openclaw plugins install npm-pack:<tarball>; profile, model, idle clock";
  await progress.phase(configure, async () => {
    if (fromImage) {
      await vm1.trustApiFront(box, services.front.caPem);
    } else {
      await vm1.writeConfig(box, baseConfig({ port: GATEWAY_PORT, publicOrigin, logFile }));
      await vm1.installPlugin(box, plugin.bytes, plugin.fileName);
      if (mode === "codex") await installCodex(box);
    }
    const { teamId, projectId } = services.api.credentials;
    const input = {
      port: GATEWAY_PORT,
      publicOrigin,
      modelBaseUrl: services.model.baseUrl,
      apiUrl: services.front.url,
    };
    const patch = jobConfigPatch({ ...input, teamId, projectId, notifyUrl: host.notifyUrl, timers, logFile, mode });
    // The image's config names its builder's origin: this VM1's replaces it.
    await vm1.patchConfig(box, fromImage ? { ...patch, gateway: { ...patch.gateway, publicOrigin } } : patch);
    // The last run's base runtime images: the plugin reads its store at start and uses one only if its key matches.
    if (seedStore) await box.writeFiles([{ path: vm1.IMAGE_STORE, content: Buffer.from(seedStore) }]);
    await vm1.createSampleRepo(box);
  });
  await progress.phase("VM1: start the gateway", async () => {
    const prelude = mode === "codex" ? approverLine(GATEWAY_PORT) : "";
    await box.runCommand({ ...vm1.gatewayStart(GATEWAY_PORT, secrets, prelude), detached: true });
    await pollUntil("the gateway on VM1 to be ready", () => host.ready(), 180_000);
  });
  return { box, host, publicOrigin };
}

interface ImageLayer {
  name: string;
  plan: ImagePlan;
  snapshotId: string;
  captured?: string;
}

/** VM1's image, layer by layer: each the cached one when its key matches, else built (and kept for the next run). */
async function vm1Image(
  progress: Progress,
  services: Services,
  plugin: { fileName: string; bytes: Buffer },
  cache: RerunCache,
  next: ReuseRecord,
  mode: AgentMode,
): Promise<{ snapshotId: string; layers: ImageLayer[] }> {
  const options = { fresh: cache.fresh, available: services.api.restored };
  const layer = async (name: string, plan: ImagePlan, build: () => Promise<string>): Promise<ImageLayer> => {
    if ("reuse" in plan) {
      progress.note(`reusing ${name} ${plan.reuse.snapshotId} (key ${plan.reuse.key.slice(0, 12)})`);
      return { name, plan, snapshotId: plan.reuse.snapshotId };
    }
    progress.note(`building ${name} (key ${plan.key.slice(0, 12)}): ${plan.why}`);
    const snapshotId = await build();
    return { name, plan, snapshotId, captured: snapshotId };
  };
  const record = (l: ImageLayer, inputs: Record<string, string | number>) =>
    "reuse" in l.plan
      ? l.plan.reuse
      : { key: l.plan.key, snapshotId: l.snapshotId, inputs, builtAt: new Date().toISOString() };

  const gatewayInputs = gatewayImageInputs(mode);
  const gatewayPlan = planImage(cache.record?.gateway, gatewayInputs, options);
  const gateway = await layer("VM1's gateway layer", gatewayPlan, () => buildGatewayImage(progress, services, mode));
  next.gateway = record(gateway, gatewayInputs);
  await cache.save(next);
  const pluginInputs = pluginImageInputs(next.gateway.key, plugin.bytes, mode);
  const pluginPlan = planImage(cache.record?.vm1, pluginInputs, options);
  const top = await layer("VM1's plugin layer", pluginPlan, () =>
    buildPluginImage(progress, services, plugin, gateway.snapshotId, mode),
  );
  next.vm1 = record(top, pluginInputs);
  await cache.save(next);
  return { snapshotId: top.snapshotId, layers: [gateway, top] };
}

/**
 * The base runtime images VM1's plugin holds (captured from a box no agent command touched), kept in the emulator's
 * store for the next run; a snapshot that holds any of this run's secrets is not kept (and fails the job).
 */
async function keepBaseImages(
  vm1Box: Sandbox,
  services: Services,
  live: string[],
  secrets: Record<string, string>,
): Promise<CachedBase[]> {
  const text = await vm1.sh(vm1Box, "read the image store", `cat ${vm1.IMAGE_STORE} 2>/dev/null || true`);
  const bases = readyBases(text).filter((b) => live.includes(b.snapshotId));
  for (const base of bases) {
    const dir = path.join(services.dataDir, "snapshots", base.snapshotId);
    for (const [name, value] of Object.entries(secrets)) {
      if ((await filesHolding([dir], value)).length > 0) throw new Error(`${name} is in base image ${base.snapshotId}`);
    }
    await services.api.saveSnapshot(base.snapshotId);
  }
  return bases;
}

const hex = (bytes = 24) => randomBytes(bytes).toString("hex");
