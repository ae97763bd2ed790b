// Issue 23, the worker cap (`maxWorkers`) on the real gateway: the packed plugin in openclaw@2026.9.2 bound to a
// TLS test host, `vercel-sandbox` profiles on the emulator (warm images on, from the run's base runtime image),
// sessions on managed worktrees of a small repository dispatched to them as the host does. With maxWorkers 1 a second conversation's placement
// starts the reclaim of the first through the gateway and is refused, retryable (OpenClaw 2026.9.2 runs a reclaim
// only once no placement is in flight, so it cannot finish inside the placement that needs it); the first's
// sandbox goes, the file written on its worker is reconciled into its worktree, and the retry is placed; the
// first's next placement does the same to the second; a conversation in an active turn is never
// reclaimed: the other's placement is refused at once. Messages (chat.send, as a channel delivers them; issue 47)
// need none of that, and a host that asks `POST …/workers/room` before placing a new one neither: the plugin's
// `before_dispatch` hook makes room before a turn is placed, so two conversations
// alternating on one worker each get every reply with no refusal and no retry, one sandbox at a time, each
// worktree holding what was written on its worker; a message while the only worker is in an active turn waits
// for it and is answered, or, past its profile's `capWait`, fails naming the cap. With maxWorkers 3, ten
// concurrent placements never have more than three sandboxes at any sampled instant, leave none behind and
// create no lease twice, and four conversations take turns on three workers the same way.
import { execFile } from "node:child_process";
import { randomUUID } from "node:crypto";
import { mkdir, writeFile } from "node:fs/promises";
import path from "node:path";
import { promisify } from "node:util";
import { Sandbox } from "@vercel/sandbox";
import { Agent, fetch as undiciFetch } from "undici";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { LocalSandboxApi } from "../../src/emulator/index.js";
import { lastAssistantText } from "../../src/main-job/host.js";
import { ScriptedModel, scriptedModelConfig } from "../suspend/scripted-model.js";
import { type SpecEmulator, seedBaseImage, startSpecEmulator } from "./base-images.js";
import { destroyedEnvironment, type Environment, emulatorSettings, TOKEN_ENV } from "./environments.js";
import { GatewayHarness, waitFor } from "./harness.js";
import { TestHost } from "./test-host.js";

const run = promisify(execFile);
const ONE = "cap1";
const THREE = "cap3";
const A = "agent:main:cap-a";
const B = "agent:main:cap-b";
const C = "agent:main:cap-c";
/** maxWorkers 1 with a short `capWait`: a message at a cap of busy workers fails soon, naming the cap. */
const ONE_SHORT = "cap1short";
const SHORT_WAIT = "6s";
const DS = ["agent:main:cap-d1", "agent:main:cap-d2", "agent:main:cap-d3", "agent:main:cap-d4"];
const MARKER = "written-on-the-worker.txt";

let harness: GatewayHarness | undefined;
let host: TestHost | undefined;
let api: LocalSandboxApi | undefined;
let world: SpecEmulator | undefined;
let repo = "";
const model = new ScriptedModel();

function gw(): GatewayHarness {
  if (!harness) throw new Error("gateway harness was not created (see beforeAll)");
  return harness;
}
function emulator() {
  if (!api) throw new Error("emulator was not started (see beforeAll)");
  return { ...api.credentials, fetch: api.fetch };
}
async function sandboxNames(): Promise<string[]> {
  return (await (await Sandbox.list(emulator())).toArray()).map((s) => s.name);
}
async function environments(): Promise<Environment[]> {
  return (await gw().callOk<{ environments: Environment[] }>("environments.list", {})).environments;
}

async function createSession(key: string, name: string) {
  await gw().callOk("sessions.create", { key, worktree: true, cwd: repo, worktreeName: name }, 120_000);
}

/** `sessions.dispatch` to `profile`, as the host places a conversation; resolves with the gateway's answer. */
async function place(key: string, profile = ONE) {
  const started = performance.now();
  const result = await gw().call<{ ok?: boolean; error?: { message?: string } }>(
    "sessions.dispatch",
    { key, profileId: profile },
    1_500_000,
  );
  const ms = Math.round(performance.now() - started);
  process.stderr.write(`[worker cap] dispatch ${key} → exit ${result.code} in ${ms} ms\n`);
  return { ...result, ms, text: gw().redact(`${result.stdout}\n${result.stderr}`) };
}

async function placed(key: string, profile = ONE) {
  const result = await place(key, profile);
  if (result.code !== 0) throw new Error(gw().describeFailure(`sessions.dispatch ${key}`, result));
  return result;
}

/** Runs a shell script on the sandbox named `name` (the worker), as the emulator's API lets a test. */
async function onWorker(
  name: string,
  script: string,
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const done = await (await Sandbox.get({ ...emulator(), name })).runCommand("sh", ["-c", script]);
  return { code: done.exitCode, stdout: (await done.stdout()).trim(), stderr: await done.stderr() };
}

/** Files named `name` under the gateway's state dir (the managed worktrees live there). */
async function findInState(name: string): Promise<string[]> {
  const { stdout } = await run("find", [gw().stateDir, "-name", name, "-type", "f"]);
  return stdout.split("\n").filter(Boolean);
}

/** A host's `POST /vercel-sandbox/v1/workers/room` to the gateway (over its TLS, with the gateway's token). */
async function askRoom(body: Record<string, string>): Promise<{ status: number; outcome?: string }> {
  const token = ((await gw().readConfig()) as { gateway: { auth: { token: string } } }).gateway.auth.token;
  const response = await undiciFetch(`https://${host!.address}:${gw().port}/vercel-sandbox/v1/workers/room`, {
    method: "POST",
    headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
    body: JSON.stringify(body),
    dispatcher: new Agent({ connect: { ca: host!.certPem }, bodyTimeout: 900_000, headersTimeout: 900_000 }),
    signal: AbortSignal.timeout(900_000),
  });
  const answer = (await response.json().catch(() => ({}))) as { outcome?: string };
  return { status: response.status, ...(answer.outcome ? { outcome: answer.outcome } : {}) };
}

/** The sandboxes' count sampled every 200 ms until stop(): the highest seen, and every name seen. */
function sampleSandboxes() {
  let highest = 0;
  const seen = new Set<string>();
  let sampling = true;
  const done = (async () => {
    while (sampling) {
      const names = await sandboxNames();
      highest = Math.max(highest, names.length);
      for (const n of names) seen.add(n);
      await new Promise((r) => setTimeout(r, 200));
    }
  })();
  return {
    async stop() {
      sampling = false;
      await done;
      return { highest, seen };
    },
  };
}

interface Answer {
  key: string;
  /** The run's last assistant text. */
  reply: string;
  ms: number;
  /** sessions.describe's row and the transcript's new messages, as text (for a failure's reason). */
  record: string;
}

/**
 * `chat.send` to `key`, as a channel hands a message to the gateway (core runs `before_dispatch` for it), then waits
 * for that run to end: its reply (the transcript's last assistant text), how long it took, and what core recorded.
 */
async function message(key: string, token: string): Promise<Answer> {
  const runId = `cap-${randomUUID()}`;
  const before =
    (await gw().callOk<{ messages?: unknown[] }>("chat.history", { sessionKey: key })).messages?.length ?? 0;
  const started = performance.now();
  const sent = await gw().call(
    "chat.send",
    { sessionKey: key, message: `Answer briefly. echo:${token}`, idempotencyKey: runId },
    900_000,
  );
  if (sent.code !== 0) throw new Error(gw().describeFailure("chat.send", sent as never));
  const described = await waitFor(
    `the turn of ${key} to end`,
    async () => {
      const row = await gw().callOk<{ session?: { status?: string; lastRunId?: string } }>("sessions.describe", {
        key,
      });
      return row.session?.lastRunId === runId && row.session.status !== "running" ? row : undefined;
    },
    { timeoutMs: 900_000, intervalMs: 1_000 },
  );
  const ms = Math.round(performance.now() - started);
  const messages = (await gw().callOk<{ messages?: unknown[] }>("chat.history", { sessionKey: key })).messages ?? [];
  const reply = lastAssistantText(messages.slice(before));
  process.stderr.write(`[worker cap] message ${key} (${token}) → ${ms} ms: ${gw().redact(reply).slice(0, 160)}\n`);
  return { key, reply, ms, record: gw().redact(JSON.stringify({ described, messages: messages.slice(before) })) };
}

/** Writes `marker` into the session workspace on the one worker there is (as the agent could have). */
async function writeOnTheWorker(marker: string): Promise<void> {
  const names = await sandboxNames();
  expect(names).toHaveLength(1);
  const written = await onWorker(
    names[0] as string,
    `set -eu; f=$(find "$HOME/.openclaw/cloud-workers" -path '*/node-host/*/workspaces/*' -name README.md -type f -print -quit); [ -n "$f" ] || { echo "no session workspace holds README.md" >&2; exit 1; }; echo "${marker}" > "$(dirname "$f")/${marker}"; cat "$(dirname "$f")/${marker}"`,
  );
  expect(written).toEqual({ code: 0, stderr: "", stdout: marker });
}

beforeAll(async () => {
  harness = await GatewayHarness.create();
  host = await TestHost.create();
  world = await startSpecEmulator({ seedVersion: harness.openclawVersion });
  api = world.api;
  repo = path.join(harness.runDir, "repo");
  await mkdir(repo, { recursive: true });
  await writeFile(path.join(repo, "README.md"), "# cap spec repository\n");
  const git = (...args: string[]) =>
    run("git", ["-c", "user.name=spec", "-c", "user.email=spec@example.invalid", ...args], { cwd: repo });
  await git("init", "-q", "-b", "main");
  await git("add", "-A");
  await git("commit", "-q", "-m", "cap spec repository");
  const baseUrl = await model.start();
  // OPENCLAW_TEST_PLUGIN_DIR: a built copy of the package to install instead of this tree (a tree others keep
  // editing never holds still long enough for its build to be fresh).
  const pluginDir = process.env.OPENCLAW_TEST_PLUGIN_DIR;
  await harness.installPlugin(await (pluginDir ? harness.packPlugin(pluginDir) : harness.packPlugin()));
  // Warm images on (the default): every placement starts from the run's base runtime image (base-images.ts), the
  // first of a project captures its project image and the later ones start from that.
  const settings = emulatorSettings(api);
  await harness.patchConfig({
    gateway: host.gatewayConfig(),
    ...scriptedModelConfig(baseUrl),
    cloudWorkers: {
      profiles: {
        [ONE]: { provider: "vercel-sandbox", settings: { ...settings, maxWorkers: 1 } },
        [ONE_SHORT]: { provider: "vercel-sandbox", settings: { ...settings, maxWorkers: 1, capWait: SHORT_WAIT } },
        [THREE]: { provider: "vercel-sandbox", settings: { ...settings, maxWorkers: 3 } },
      },
    },
  });
  await seedBaseImage(harness.stateDir, settings, world);
  await harness.startGateway({
    bind: "custom",
    tlsCertPem: host.certPem,
    env: { [TOKEN_ENV]: api.credentials.token },
    secrets: [api.credentials.token],
  });
}, 600_000);

afterAll(async () => {
  try {
    await harness?.dispose();
  } finally {
    await model.close();
    await world?.close();
    await host?.dispose();
  }
}, 180_000);

describe("maxWorkers 1: one warm worker, moved between conversations through the gateway", () => {
  it("the second conversation reclaims the first (sandbox gone, workspace reconciled), then is placed on retry; the first's next placement reclaims the second", {
    timeout: 2_400_000,
  }, async () => {
    await createSession(A, "cap-a");
    await createSession(B, "cap-b");
    await placed(A);
    const [first] = await sandboxNames();
    expect(await sandboxNames()).toHaveLength(1);
    // A file the agent could have written on A's worker, in its session workspace (the node host's copy of the
    // worktree; the prepared checkout and core's git seed hold the README too, and are not the workspace).
    // Found by path under the node host's home (a search of all of /home, the user's reach beyond it included, wrote
    // to stderr in a fresh-clone run, and errors are not ignored here); the script fails,
    // saying why, when there is no such workspace, and reads the file back so the write itself is proven.
    const written = await onWorker(
      first as string,
      `set -eu; f=$(find "$HOME/.openclaw/cloud-workers" -path '*/node-host/*/workspaces/*' -name README.md -type f -print -quit); [ -n "$f" ] || { echo "no session workspace holds README.md" >&2; exit 1; }; grep -q 'cap spec repository' "$f"; d=$(dirname "$f"); echo reconciled > "$d/${MARKER}"; echo "$d"; cat "$d/${MARKER}"`,
    );
    expect(written).toEqual({
      code: 0,
      stderr: "",
      stdout: expect.stringMatching(/\/node-host\/.*\/workspaces\/.*\nreconciled$/),
    });
    expect(await findInState(MARKER)).toEqual([]);

    // At the cap: B's placement starts the reclaim of A (idle) and is refused, retryable, saying so (OpenClaw runs
    // a reclaim only once no placement is in flight); the host's retry then finds the slot free.
    const refused = await place(B);
    expect(refused.code).not.toBe(0);
    expect(refused.text).toContain("maxWorkers 1 reached; the least recently active idle worker");
    await waitFor("A's sandbox to be released", async () => ((await sandboxNames()).length === 0 ? true : undefined), {
      timeoutMs: 600_000,
    });
    await placed(B);
    const afterB = await sandboxNames();
    expect(afterB).toHaveLength(1);
    expect(afterB).not.toContain(first);
    const reconciled = await findInState(MARKER);
    process.stderr.write(
      `[worker cap] marker reconciled into: ${reconciled.map((p) => path.relative(gw().stateDir, p)).join(", ")}\n`,
    );
    expect(reconciled.length).toBeGreaterThan(0);

    const refusedA = await place(A);
    expect(refusedA.text).toContain("is being reclaimed through the gateway");
    await waitFor("B's sandbox to be released", async () => ((await sandboxNames()).length === 0 ? true : undefined), {
      timeoutMs: 600_000,
    });
    await placed(A);
    const afterA = await sandboxNames();
    expect(afterA).toHaveLength(1);
    expect(afterA).not.toContain(afterB[0]);
    expect(afterA).not.toContain(first);
  });

  const timings: Array<{ key: string; ms: number }> = [];
  afterAll(() => {
    process.stderr.write(`[worker cap] message timings: ${JSON.stringify(timings)}\n`);
  });

  it("two conversations alternate three times each way: every message is answered, one sandbox at a time, each worktree keeps what was written on its worker", {
    timeout: 2_400_000,
  }, async () => {
    model.holding = false;
    // A (placed by the specs above) holds the one worker. C is placed once (on the short-wait profile, for the next
    // case) as a host places a new conversation at the cap: it asks the plugin for room first (sessions.dispatch runs
    // no hook), which reclaims A's worker and answers once it is gone; the placement after it is not refused.
    await createSession(C, "cap-c");
    expect(await askRoom({ profileId: ONE_SHORT })).toEqual({ status: 200, outcome: "reclaimed" });
    await waitFor("A's sandbox to be gone", async () => ((await sandboxNames()).length === 0 ? true : undefined), {
      timeoutMs: 60_000,
    });
    await placed(C, ONE_SHORT);
    expect(await askRoom({ bogus: "x" })).toEqual({ status: 400 });
    const sampler = sampleSandboxes();
    try {
      let n = 0;
      for (const key of [B, A, B, A, B, A]) {
        n += 1;
        const marker = `switch-${n}.txt`;
        await writeOnTheWorker(marker);
        expect(await findInState(marker)).toEqual([]);
        const token = `m${n}-${randomUUID().slice(0, 8)}`;
        const answer = await message(key, token);
        timings.push({ key, ms: answer.ms });
        expect(answer.reply, answer.record).toContain(`echo:${token}`);
        // The worker it replaced was reclaimed: core reconciled its workspace into its session's worktree.
        expect((await findInState(marker)).length).toBeGreaterThan(0);
        expect(await sandboxNames()).toHaveLength(1);
      }
    } finally {
      const { highest, seen } = await sampler.stop();
      process.stderr.write(
        `[worker cap] alternation: highest concurrent sandboxes ${highest}, distinct ${seen.size}\n`,
      );
      expect(highest).toBe(1);
      // C's worker, then one per message: every message switched the worker.
      expect(seen.size).toBe(7);
    }
  });

  it("with the only worker in an active turn, a message waits for it and is then answered; past its profile's capWait, one fails naming the cap", {
    timeout: 1_200_000,
  }, async () => {
    model.holding = true;
    const runId = `cap-held-${randomUUID()}`;
    try {
      // A (placed by the last message) starts a turn the model holds.
      const sent = await gw().call("chat.send", { sessionKey: A, message: "hold on", idempotencyKey: runId }, 600_000);
      if (sent.code !== 0) throw new Error(gw().describeFailure("chat.send", sent as never));
      await waitFor("A's model call to be held", async () => (model.held > 0 ? true : undefined), {
        timeoutMs: 300_000,
      });
      const before = await sandboxNames();
      expect(before).toHaveLength(1);
      // C's profile waits 6 s at a cap of busy workers: its message fails then, saying why, and nothing is reclaimed.
      const failed = await message(C, `short-${randomUUID().slice(0, 8)}`);
      expect(failed.record).toContain("maxWorkers 1 reached and every worker is busy");
      expect(failed.reply).not.toMatch(/echo:short-/);
      expect(await sandboxNames()).toEqual(before);
      // B's profile waits minutes: its message waits while A's turn runs, and is answered once A's turn ends.
      const token = `waited-${randomUUID().slice(0, 8)}`;
      const waiting = message(B, token);
      await new Promise((r) => setTimeout(r, 8_000));
      expect(await sandboxNames()).toEqual(before);
      model.holding = false;
      model.releaseAll();
      const answered = await waiting;
      expect(answered.reply, answered.record).toContain(`echo:${token}`);
      expect(answered.ms).toBeGreaterThan(8_000);
      expect(await sandboxNames()).not.toEqual(before);
    } finally {
      model.holding = false;
      model.releaseAll();
    }
  });

  it("while the placed conversation is in an active turn, the other's placement is refused at once, saying so", {
    timeout: 600_000,
  }, async () => {
    // The case before left B on the worker: A's message switches it back (the hook), then the model holds A's turn.
    model.holding = true;
    try {
      const sent = await gw().call(
        "chat.send",
        { sessionKey: A, message: "hello", idempotencyKey: randomUUID() },
        600_000,
      );
      if (sent.code !== 0) throw new Error(gw().describeFailure("chat.send", sent as never));
      await waitFor("the turn's model call to be held", async () => (model.held > 0 ? true : undefined), {
        timeoutMs: 300_000,
      });
      const before = await sandboxNames();
      expect(before).toHaveLength(1);
      const refused = await place(B);
      expect(refused.code).not.toBe(0);
      expect(refused.text).toContain("maxWorkers 1 reached and every worker is busy");
      expect(await sandboxNames()).toEqual(before);
    } finally {
      // A held turn left behind would hold the worker busy for the next case, whatever failed here.
      model.releaseAll();
    }
  });
});

describe("maxWorkers 3: ten concurrent placements", () => {
  it("never more than three sandboxes at any sampled instant, none left behind, no lease created twice", {
    timeout: 1_800_000,
  }, async () => {
    // The conversations' workers (when the specs above placed them) go first, so the count starts from zero.
    for (const key of [A, B, C]) await gw().call("sessions.reclaim", { key }, 600_000);
    await waitFor("no sandbox left", async () => ((await sandboxNames()).length === 0 ? true : undefined), {
      timeoutMs: 240_000,
    });
    const sampler = sampleSandboxes();
    try {
      const created = await Promise.all(
        Array.from({ length: 10 }, () =>
          gw().call<Environment>("environments.create", { profileId: THREE, idempotencyKey: randomUUID() }, 840_000),
        ),
      );
      // A placement the cap refuses fails environments.create itself, at once, with the reason.
      const ids = created.map((c) => c.json?.id).filter((id): id is string => typeof id === "string");
      const refusals = created.filter((c) => c.code !== 0).map((c) => gw().redact(`${c.stdout}\n${c.stderr}`));
      expect(ids.length + refusals.length).toBe(10);
      for (const text of refusals) expect(text).toContain("maxWorkers 3 reached and every worker is busy");
      const settled = await waitFor(
        "every admitted environment ready",
        async () => {
          const listed = (await environments()).filter((e) => ids.includes(e.id));
          if (listed.some((e) => e.worker?.state === "failed")) throw new Error(JSON.stringify(listed));
          return listed.filter((e) => e.worker?.state === "ready").length === ids.length ? listed : undefined;
        },
        { timeoutMs: 1_200_000, intervalMs: 2_000 },
      );
      for (const e of settled) await gw().callOk("environments.destroy", { environmentId: e.id }, 600_000);
      for (const e of settled) await destroyedEnvironment(gw(), e.id);
      await waitFor("no sandbox left", async () => ((await sandboxNames()).length === 0 ? true : undefined), {
        timeoutMs: 240_000,
      });
      const { highest, seen } = await sampler.stop();
      process.stderr.write(
        `[worker cap] 10 concurrent placements, maxWorkers 3: highest concurrent sandboxes ${highest}, distinct sandboxes ${seen.size}, admitted ${ids.length}, refused ${refusals.length}\n`,
      );
      expect(highest).toBeLessThanOrEqual(3);
      expect(ids.length).toBe(3);
      const leases = settled.map((e) => e.worker?.leaseId);
      expect(new Set(leases).size).toBe(3);
      expect(seen.size).toBe(3);
      expect(await sandboxNames()).toEqual([]);
    } finally {
      // Stopped above unless something failed first; a sampler's own failure must not hide that one.
      await sampler.stop().catch(() => undefined);
    }
  });

  it("four conversations take turns on three workers: every message answered, never more than three sandboxes", {
    timeout: 2_400_000,
  }, async () => {
    model.holding = false;
    await waitFor("no sandbox left", async () => ((await sandboxNames()).length === 0 ? true : undefined), {
      timeoutMs: 240_000,
    });
    for (const [i, key] of DS.entries()) await createSession(key, `cap-d${i + 1}`);
    // Three placed by the host (room under the cap); the first reclaimed again so the fourth is placed too.
    for (const key of DS.slice(0, 3)) await placed(key, THREE);
    await gw().callOk("sessions.reclaim", { key: DS[0] }, 600_000);
    await waitFor("three sandboxes less one", async () => ((await sandboxNames()).length === 2 ? true : undefined), {
      timeoutMs: 600_000,
    });
    await placed(DS[3] as string, THREE);
    const sampler = sampleSandboxes();
    const answers: Answer[] = [];
    try {
      // The first message is for a conversation whose worker was reclaimed: room is made by reclaiming the least
      // recently active idle worker; a later one finds its own worker still there, or was that worker, and so on.
      for (const [i, key] of DS.entries()) {
        const token = `d${i + 1}-${randomUUID().slice(0, 8)}`;
        const answer = await message(key, token);
        answers.push(answer);
        expect(answer.reply, answer.record).toContain(`echo:${token}`);
        expect((await sandboxNames()).length).toBeLessThanOrEqual(3);
      }
    } finally {
      const { highest, seen } = await sampler.stop();
      process.stderr.write(
        `[worker cap] four conversations on maxWorkers 3: highest ${highest}, distinct ${seen.size}, timings ${JSON.stringify(answers.map((a) => ({ key: a.key, ms: a.ms })))}\n`,
      );
      expect(highest).toBeLessThanOrEqual(3);
    }
    for (const key of DS) await gw().call("sessions.reclaim", { key }, 600_000);
    await waitFor("no sandbox left", async () => ((await sandboxNames()).length === 0 ? true : undefined), {
      timeoutMs: 240_000,
    });
  });
});
