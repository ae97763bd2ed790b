// The main job's three messages: each hands VM1 a command whose proof only running it yields, then finds which
// sandbox holds the proof (VM2 alone must) and whether the reply carries the worker's output. Message 1 (cold)
// places the session on VM2, message 2 (warm) must reuse it, message 3 wakes VM1 from its checkpoint.
import { randomInt } from "node:crypto";
import { Sandbox } from "@vercel/sandbox";
import { approvalsAllowed } from "./codex.js";
import { CODEX_PLUGIN_SPEC } from "./codex-config.js";
import { hex, type JobContext } from "./context.js";
import { expectedProof, proofCommand, proofsOn, runtimeArchives, workerSteps } from "./evidence.js";
import type { Reply } from "./host.js";
import { plainLines, watchPhases } from "./live.js";
import { RUN_PREFIX } from "./model.js";
import { seconds } from "./report.js";
import { RUN_MARKER } from "./responses.js";
import { gatewayVersionFor } from "./topology.js";
import * as vm1 from "./vm1.js";

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

/** The conversation so far: its messages, and what message 1 showed (VM2's steps, the live provision phases). */
export interface Conversation {
  messages: MessageOutcome[];
  stepsBefore: string[];
  phasesShown: number;
}

/** Message 1 (cold, its provision phases shown live) and message 2, which must reuse the warm VM2. */
export async function firstMessages(job: JobContext): Promise<Conversation> {
  const { progress, host, options, log } = job;
  const messages: MessageOutcome[] = [];
  const phases = watchPhases(() => host.vm1(), options.live ?? plainLines(log));
  let phasesShown = 0;
  await progress
    .phase("Message 1 (cold): session placed on VM2, the model's exec runs there", () =>
      send(job, messages, "message 1"),
    )
    .finally(async () => {
      phasesShown = await phases.stop();
    });
  const stepsBefore = await workerSteps(await host.vm1());
  for (const step of stepsBefore) progress.note(`VM2 ${step}`);
  await progress.phase("Message 2 (warm): same VM2, no new sandbox", () => send(job, messages, "message 2"));
  if (messages[1]!.ranOn !== messages[0]!.ranOn || messages[1]!.sandboxesCreated !== 0) {
    throw new Error("message 2 did not reuse the warm VM2");
  }
  return { messages, stepsBefore, phasesShown };
}

/**
 * Message 3, which wakes VM1 from its checkpoint (a new VM2 for the woken gateway); returns the summary's agent line
 * (with Codex, once every message's command is seen to have run by remote-exec).
 */
export async function wokenMessage(job: JobContext, { messages, stepsBefore, phasesShown }: Conversation) {
  const { progress, host, options, log, mode } = job;
  // A new VM2 for the woken gateway (suspend reclaimed the first): its provision phases, live and after.
  const phases3 = watchPhases(() => host.vm1(), options.live ?? plainLines(log), { skip: phasesShown });
  await progress
    .phase("Message 3: wakes VM1 from its checkpoint (fresh gateway), reply", () => send(job, messages, "message 3"))
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
  return agent;
}

/** Hands one message to VM1 through the host, records its outcome in `messages`, and checks where it ran. */
async function send(job: JobContext, messages: MessageOutcome[], label: string): Promise<MessageOutcome> {
  const { progress, host, mode } = job;
  const proof = `proof-${hex(4)}`;
  const [a, b] = [randomInt(10_000, 100_000), randomInt(10_000, 100_000)];
  const before = job.creates();
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
    job,
    reply,
    { prompt, proof, expected: expectedProof(proof, a, b) },
    job.creates() - before,
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
}

/** Which running sandbox other than VM1 holds the proof, with the line the command wrote there; and whether VM1 does. */
async function locateProof(
  job: JobContext,
  reply: Reply,
  sent: { prompt: string; proof: string; expected: string },
  created: number,
): Promise<MessageOutcome> {
  const { box, host, services } = job;
  let ranOn: string | undefined;
  let workerLine: string | undefined;
  for (const s of await job.sandboxes()) {
    if (s.name === box.name || s.status !== "running") continue;
    const line = (await proofsOn(await Sandbox.get({ ...services.connection, name: s.name })))
      .split("\n")
      .find((l) => l.startsWith(`${sent.proof} `));
    if (line !== undefined) [ranOn, workerLine] = [s.name, line];
  }
  const onVm1 = (await proofsOn(await host.vm1())).includes(sent.proof);
  return { ...reply, ...sent, sandboxesCreated: created, onVm1, ...(ranOn ? { ranOn, workerLine } : {}) };
}
