// Restarts (issue 11): a gateway process running the built provider is SIGKILLed before its create leaves,
// after the API committed the create but before the answer reached the provider, and during enrollment. A new provider instance
// on the same state dir then replays the operation, as a restarted gateway's sweep does: it adopts the one
// sandbox, never makes a second, and destroy proves absence. The emulator stays in this process; the child
// reaches it through its URL with a token from the environment.
import { type ChildProcess, spawn } from "node:child_process";
import { once } from "node:events";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { Sandbox } from "@vercel/sandbox";
import type { WorkerProfile } from "openclaw/plugin-sdk/plugin-entry";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { enrollingOptions, operationId } from "../../src/conformance/fixtures.js";
import { type LocalSandboxApi, startLocalSandboxApi } from "../../src/emulator/index.js";
import { sandboxNameOf } from "../../src/provider/allocation.js";
import { createVercelSandboxProvider, type VercelSandboxProvider } from "../../src/provider/index.js";
import { REPO_ROOT } from "../gateway/openclaw.js";
import { ensureBuilt } from "../setup/build.js";

const CHILD = join(REPO_ROOT, "test", "provider", "fixtures", "restart", "provision-child.mjs");
const DIST = join(REPO_ROOT, "dist", "provider", "index.js");
const CREATE = /^\/v[23]\/sandboxes$/;

let api: LocalSandboxApi;
let profile: WorkerProfile;
const dirs: string[] = [];
const children = new Set<ChildProcess>();
const providers: VercelSandboxProvider[] = [];
const connection = () => ({ ...api.credentials, fetch: api.fetch });

interface Gateway {
  child: ChildProcess;
  /** Resolves with the first stdout line starting with `prefix`. */
  line(prefix: string): Promise<string>;
  kill(): Promise<void>;
}

/** Starts a gateway process that provisions `op`; `stopAt` chooses where it hangs, waiting to be killed. */
function startGateway(world: World, op: string, stopAt: "create" | "response" | "enrollment" | "none"): Gateway {
  const child = spawn(process.execPath, [CHILD], {
    env: {
      PATH: process.env.PATH,
      RESTART_DIST: DIST,
      RESTART_STATE_DIR: world.stateDir,
      RESTART_SCOPE: world.scope,
      RESTART_OPERATION: op,
      RESTART_PROFILE: JSON.stringify({ ...profile, tokenEnv: "RESTART_TOKEN" }),
      RESTART_TOKEN: api.credentials.token,
      RESTART_STOP_AT: stopAt,
    },
    stdio: ["ignore", "pipe", "pipe"],
  });
  children.add(child);
  const exited = once(child, "exit");
  let stdout = "";
  let stderr = "";
  child.stdout?.on("data", (chunk: Buffer) => {
    stdout += chunk.toString();
  });
  child.stderr?.on("data", (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  return {
    child,
    async line(prefix) {
      for (;;) {
        const found = stdout.split("\n").find((l) => l.startsWith(prefix));
        if (found) return found;
        if (child.exitCode !== null) {
          throw new Error(`the gateway process exited ${child.exitCode} before "${prefix}":\n${stdout}\n${stderr}`);
        }
        await sleep(25);
      }
    },
    async kill() {
      if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
      await exited;
      children.delete(child);
    },
  };
}

let worlds = 0;
async function world() {
  worlds += 1;
  const scope = `restart-${worlds}`;
  const stateDir = await mkdtemp(join(tmpdir(), "vsb-restart-"));
  dirs.push(stateDir);
  /** The restarted gateway: a new provider instance on the same state dir. */
  const restarted = () => {
    const provider = createVercelSandboxProvider({
      env: { RESTART_TOKEN: api.credentials.token },
      logger: { warn: () => undefined },
      scope,
      stateDir,
      enroll: async ({ enrollment }) => enrollment.waitForDeviceId(),
      absenceProof: { budgetMs: 5_000, firstDelayMs: 20, maxDelayMs: 250 },
    });
    providers.push(provider);
    return provider;
  };
  const sandboxes = async () =>
    (await (await Sandbox.list({ ...connection(), tags: { "openclaw-scope": scope } })).toArray()).map((s) => s.name);
  return { scope, stateDir, restarted, sandboxes };
}
type World = Awaited<ReturnType<typeof world>>;

const createsSince = (from: number) =>
  api
    .requests()
    .slice(from)
    .filter((r) => r.method === "POST" && CREATE.test(r.path));

/** The replay after the restart: one lease, one sandbox, no second committed create; then destroy proves absence. */
async function replayConverges(w: World, op: string, from: number, committedBefore: number) {
  const provider = w.restarted();
  const { leaseId } = await provider.resolveAllocation(profile, op);
  const lease = await provider.provision(profile, op, enrollingOptions());
  expect(lease.leaseId).toBe(leaseId);
  expect(await w.sandboxes()).toEqual([sandboxNameOf(leaseId)]);
  const committed = createsSince(from).filter((r) => r.status === 200).length;
  // Whatever the killed process committed plus what the replay committed is one sandbox, ever.
  expect(committedBefore + committed).toBe(1);
  await provider.destroy({ leaseId, profile });
  expect(await w.sandboxes()).toEqual([]);
  expect(await provider.inspect({ leaseId, profile })).toEqual({ status: "destroyed" });
}

beforeAll(async () => {
  await ensureBuilt();
  api = await startLocalSandboxApi();
  profile = {
    apiUrl: api.url,
    tokenEnv: "RESTART_TOKEN",
    teamId: api.credentials.teamId,
    projectId: api.credentials.projectId,
    timeout: "10m",
  };
}, 300_000);
afterEach(async () => {
  api.faults.clear();
  for (const child of children) {
    if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
    await once(child, "exit").catch(() => undefined);
  }
  children.clear();
});
afterAll(async () => {
  for (const p of providers) await p.dispose();
  await api?.close();
  for (const dir of dirs) await rm(dir, { recursive: true, force: true });
});

describe("a gateway process killed mid-provision, replayed by a new provider on the same state dir", () => {
  it("killed before its create left: nothing was made, and the replay creates the one sandbox", async () => {
    const w = await world();
    const op = operationId();
    const from = api.requests().length;
    const gateway = startGateway(w, op, "create");
    await gateway.line("CREATING");
    await gateway.kill();
    expect(createsSince(from)).toEqual([]);
    expect(await w.sandboxes()).toEqual([]);
    await replayConverges(w, op, api.requests().length, 0);
  });

  it("killed after its create committed, before the answer reached it: the replay adopts what the create made", async () => {
    const w = await world();
    const op = operationId();
    const from = api.requests().length;
    const gateway = startGateway(w, op, "response");
    expect(await gateway.line("CREATED ")).toBe("CREATED 200");
    await gateway.kill();
    expect(createsSince(from).filter((r) => r.status === 200)).toHaveLength(1);
    expect(await w.sandboxes()).toHaveLength(1);
    await replayConverges(w, op, api.requests().length, 1);
  });

  it("killed during enrollment: the sandbox is kept, and the replay adopts it instead of creating another", async () => {
    const w = await world();
    const op = operationId();
    const from = api.requests().length;
    const gateway = startGateway(w, op, "enrollment");
    await gateway.line("ENROLLING");
    await gateway.kill();
    const committed = createsSince(from).filter((r) => r.status === 200);
    expect(committed).toHaveLength(1);
    expect(await w.sandboxes()).toHaveLength(1);
    await replayConverges(w, op, api.requests().length, 1);
  });

  it("the same child, left alone, provisions to the end: the harness drives the real provider", async () => {
    const w = await world();
    const op = operationId();
    const gateway = startGateway(w, op, "none");
    const lease = JSON.parse((await gateway.line("LEASE ")).slice("LEASE ".length)) as { leaseId: string };
    await gateway.kill();
    expect(await w.sandboxes()).toEqual([sandboxNameOf(lease.leaseId)]);
    const provider = w.restarted();
    await provider.destroy({ leaseId: lease.leaseId, profile });
    expect(await w.sandboxes()).toEqual([]);
  });
});
