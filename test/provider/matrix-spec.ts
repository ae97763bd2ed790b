// The fault matrix (issue 11): faults × Vercel calls × provider operations, against the emulator through the
// real SDK. Which calls an operation makes is read from its own request log on a fault-free run; every other
// cell is "n/a". Each applicable cell injects its fault on that call, runs the operation, checks the outcome
// the contract asks for (matrix-cells.ts), then does what core would do next (replay a retryable failure,
// tear the lease down) and counts what is left: every cell must end with no leaked and no duplicate sandbox.
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { Sandbox } from "@vercel/sandbox";
import { type WorkerProfile, WorkerProviderError } from "openclaw/plugin-sdk/plugin-entry";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { enrollingOptions, operationId } from "../../src/conformance/fixtures.js";
import { type LocalSandboxApi, startLocalSandboxApi } from "../../src/emulator/index.js";
import { sandboxNameOf } from "../../src/provider/allocation.js";
import {
  createVercelSandboxProvider,
  type NodeEnroller,
  type VercelSandboxProvider,
} from "../../src/provider/index.js";
import {
  CALLER_TIMEOUT_MS,
  CALLS,
  type Call,
  callOf,
  expectedOutcome,
  FAULTS,
  type Fault,
  type OperationId,
  type Outcome,
  outcomeOf,
} from "./matrix-cells.js";

let api: LocalSandboxApi;
let profile: WorkerProfile;
const dirs: string[] = [];
const connection = () => ({ ...api.credentials, fetch: api.fetch });
const quickProof = { budgetMs: 3_000, firstDelayMs: 20, maxDelayMs: 200 };
const KEEPALIVE_MS = 200;
/** The conformance fixtures' stand-in: the node "enrolls" by reporting the gateway enrollment's device id. */
const standInEnroller: NodeEnroller = async ({ enrollment }) => enrollment.waitForDeviceId();

interface Row {
  operation: OperationId;
  call: string;
  fault: string;
  expected: Outcome;
  actual: Outcome;
  /** What the operation's own result checks found wrong, if anything. */
  problems: string[];
  duplicates: number;
  leaked: number;
}
const rows: Row[] = [];
const notApplicable: Array<{ operation: OperationId; call: string }> = [];

let cellCount = 0;
/** One cell's world: its own gateway scope (so its sandboxes are countable by tag) and state dir. */
async function cellWorld() {
  cellCount += 1;
  const scope = `matrix-${cellCount}`;
  const stateDir = await mkdtemp(join(tmpdir(), "vsb-matrix-"));
  dirs.push(stateDir);
  const warnings: string[] = [];
  const providers: VercelSandboxProvider[] = [];
  const make = () => {
    const provider = createVercelSandboxProvider({
      env: { MATRIX_TOKEN: api.credentials.token },
      logger: { warn: (m) => warnings.push(m) },
      scope,
      stateDir,
      enroll: standInEnroller,
      absenceProof: quickProof,
      adoptLookups: { attempts: 3, firstDelayMs: 50 },
      keepaliveIntervalMs: KEEPALIVE_MS,
    });
    providers.push(provider);
    return provider;
  };
  const sandboxes = async () =>
    (await (await Sandbox.list({ ...connection(), tags: { "openclaw-scope": scope } })).toArray()).filter(
      (s) => s.status !== "failed",
    );
  const dispose = async () => {
    for (const p of providers) await p.dispose();
  };
  return { scope, warnings, make, sandboxes, dispose };
}
type World = Awaited<ReturnType<typeof cellWorld>>;

/** The state an operation starts from, made without faults, and the operation itself. */
interface Scenario {
  operationId: string;
  leaseId: string;
  run: () => Promise<unknown>;
  /** Requests up to this point belong to the setup, not to the operation. */
  from: number;
  /** Whether the operation arms a keepalive whose first extension belongs to its window. */
  armsKeepalive: boolean;
  /** Sandboxes of this lease the operation should leave when it succeeds, and when it fails. */
  leavesOnSuccess: number;
  leavesOnFailure: number;
}

async function scenario(operation: OperationId, world: World): Promise<Scenario> {
  const op = operationId();
  const setup = world.make();
  const { leaseId } = await setup.resolveAllocation(profile, op);
  if (operation === "provision") {
    return {
      operationId: op,
      leaseId,
      from: api.requests().length,
      armsKeepalive: true,
      leavesOnSuccess: 1,
      leavesOnFailure: 0,
      run: () => world.make().provision(profile, op, enrollingOptions()),
    };
  }
  await setup.provision(profile, op, enrollingOptions());
  await setup.dispose();
  if (operation === "maintain") {
    // Core destroyed the lease, then a late replay re-created its sandbox: the one thing maintain releases.
    await setup.destroy({ leaseId, profile });
    const tags = { "openclaw-scope": world.scope };
    await Sandbox.create({ ...connection(), name: sandboxNameOf(leaseId), runtime: "node24", tags });
  }
  const provider = world.make();
  const from = api.requests().length;
  switch (operation) {
    case "inspect":
      return {
        operationId: op,
        leaseId,
        from,
        armsKeepalive: true,
        leavesOnSuccess: 1,
        leavesOnFailure: 1,
        run: () => provider.inspect({ leaseId, profile }),
      };
    case "destroy":
      return {
        operationId: op,
        leaseId,
        from,
        armsKeepalive: false,
        leavesOnSuccess: 0,
        leavesOnFailure: 1,
        run: () => provider.destroy({ leaseId, profile }),
      };
    default:
      return {
        operationId: op,
        leaseId,
        from,
        armsKeepalive: false,
        leavesOnSuccess: 0,
        leavesOnFailure: 1,
        run: async () =>
          provider.maintain?.({
            profiles: [profile],
            signal: new AbortController().signal,
            assertCurrent: () => undefined,
          }),
      };
  }
}

async function waitFor(condition: () => boolean | Promise<boolean>, what: string, tries = 300) {
  for (let i = 0; i < tries; i += 1) {
    if (await condition()) return;
    await sleep(50);
  }
  throw new Error(`timed out waiting for ${what}`);
}

/** The window ends once the keepalive the operation armed has extended the session (after any faults). */
async function awaitKeepaliveExtension(from: number) {
  await waitFor(
    () =>
      api
        .requests()
        .slice(from)
        .some((r) => r.path.endsWith("/extend-timeout") && r.status === 200),
    "a keepalive extension",
  );
}

async function settle(run: () => Promise<unknown>): Promise<{ result?: unknown; error?: unknown }> {
  try {
    return { result: await run() };
  } catch (error) {
    return { error };
  }
}

/** Runs one operation with no fault and returns the calls its window made. */
async function baseline(operation: OperationId): Promise<Set<string>> {
  const world = await cellWorld();
  try {
    const s = await scenario(operation, world);
    const { error } = await settle(s.run);
    expect(error).toBeUndefined();
    if (s.armsKeepalive) await awaitKeepaliveExtension(s.from);
    const window = api.requests().slice(s.from);
    const unclassified = window.filter((r) => !callOf(r));
    expect(unclassified, `${operation} made requests outside the call catalogue`).toEqual([]);
    await world.make().destroy({ leaseId: s.leaseId, profile });
    return new Set(window.map((r) => callOf(r)?.id ?? "?"));
  } finally {
    await world.dispose();
  }
}

async function runCell(operation: OperationId, call: Call, fault: Fault): Promise<Row> {
  const world = await cellWorld();
  const problems: string[] = [];
  let duplicates = 0;
  const count = async () => {
    const live = (await world.sandboxes()).length;
    duplicates = Math.max(duplicates, live - 1);
    return live;
  };
  try {
    const s = await scenario(operation, world);
    const name = sandboxNameOf(s.leaseId);
    // Name-scoped calls get a name-scoped fault, so nothing but this cell's sandbox can consume it.
    const path = call.id === "get" || call.id === "delete" ? new RegExp(`^/v2/sandboxes/${name}$`) : call.path;
    api.faults.inject({ method: call.method, path, ...fault.rule });
    const running = settle(s.run);
    // Core's timeout: it stops waiting but never cancels the call, and its next call for this environment
    // waits until this one settles, so the cell does too.
    await Promise.race([running, sleep(CALLER_TIMEOUT_MS)]);
    const { result, error } = await running;
    const actual = outcomeOf(
      error,
      WorkerProviderError.isCleanupIndeterminate,
      (e) => e instanceof WorkerProviderError,
    );
    if (error === undefined && s.armsKeepalive) {
      await awaitKeepaliveExtension(s.from);
      if (!world.warnings.every((w) => !w.includes(api.credentials.token)))
        problems.push("a warning carried the token");
    }
    if (error === undefined && operation === "inspect" && (result as { status?: string })?.status !== "active") {
      problems.push(`inspect said ${JSON.stringify(result)}`);
    }
    if (error instanceof Error && error.message.includes(api.credentials.token))
      problems.push("the error carried the token");
    const hits = api
      .requests()
      .slice(s.from)
      .filter((r) => r.method === call.method && path.test(r.path) && r.status === (fault.rule.status ?? r.status));
    const dropped = fault.rule.reset || fault.rule.dropAfterCommit ? hits.filter((r) => r.status === 0) : hits;
    if (dropped.length < (fault.rule.times ?? 1)) problems.push(`the fault hit ${dropped.length} requests`);
    // What the operation may leave: its live lease, or nothing once a failed provision released; more is a leak.
    const owed = error === undefined ? s.leavesOnSuccess : s.leavesOnFailure;
    const afterOperation = await count();
    if (afterOperation < owed) problems.push(`${afterOperation} sandboxes after the operation, expected ${owed}`);
    api.faults.clear();

    // What core does next: replay a retryable failure, then tear the lease down (sweeps call destroy).
    const core = world.make();
    if (error !== undefined && operation === "provision")
      await core.provision(profile, s.operationId, enrollingOptions());
    if (error !== undefined && operation === "maintain") await s.run();
    await count();
    await core.destroy({ leaseId: s.leaseId, profile });
    const leaked = Math.max(0, afterOperation - owed) + (await count());
    return {
      operation,
      call: call.id,
      fault: fault.id,
      expected: expectedOutcome(fault, call, operation),
      actual,
      problems,
      duplicates,
      leaked,
    };
  } finally {
    api.faults.clear();
    await world.dispose();
  }
}

function printTable() {
  const lines = rows.map(
    (r) =>
      `${r.operation.padEnd(9)} ${r.call.padEnd(14)} ${r.fault.padEnd(16)} expected ${r.expected.padEnd(12)} got ${r.actual.padEnd(12)} leaked ${r.leaked} duplicates ${r.duplicates}${r.problems.length ? ` PROBLEMS: ${r.problems.join("; ")}` : ""}`,
  );
  for (const { operation, call } of notApplicable) {
    lines.push(
      `${operation.padEnd(9)} ${call.padEnd(14)} ${"(every fault)".padEnd(16)} n/a: ${operation} never makes this call`,
    );
  }
  const leaks = rows.reduce((n, r) => n + r.leaked, 0);
  const duplicates = rows.reduce((n, r) => n + r.duplicates, 0);
  lines.push(
    `cells: ${rows.length} applicable, ${notApplicable.length * FAULTS.length} n/a (${notApplicable.length} operation × call pairs × ${FAULTS.length} faults); leaks: ${leaks}; duplicates: ${duplicates}`,
  );
  console.log(`fault matrix\n${lines.join("\n")}`);
}

/**
 * The matrix's rows of `operations`, in a spec file of their own (matrix-*.test.ts): each file has its own
 * emulator, and the rows, whose faults mostly wait (the SDK's retries, a latency past the caller's timeout), run
 * side by side in the run's workers instead of one after another.
 */
export function defineFaultMatrix(operations: readonly OperationId[]): void {
  beforeAll(async () => {
    api = await startLocalSandboxApi();
    profile = {
      apiUrl: api.url,
      tokenEnv: "MATRIX_TOKEN",
      teamId: api.credentials.teamId,
      projectId: api.credentials.projectId,
      timeout: "2m",
    };
  });
  afterAll(async () => {
    await api.close();
    for (const dir of dirs) await rm(dir, { recursive: true, force: true });
    printTable();
  });

  describe("fault matrix: faults × calls × operations", () => {
    it.each(operations)(
      "%s: every call it makes, under every fault, ends as the contract asks with no leaked or duplicate sandbox",
      async (operation) => {
        const applicable = await baseline(operation);
        for (const call of CALLS) {
          if (!applicable.has(call.id)) notApplicable.push({ operation, call: call.id });
        }
        // Every operation makes at least one call, so its row of the matrix is never empty.
        expect(applicable.size).toBeGreaterThan(0);
        for (const call of CALLS.filter((c) => applicable.has(c.id))) {
          for (const fault of FAULTS) {
            const row = await runCell(operation, call, fault);
            rows.push(row);
            const cell = `${operation} × ${call.id} × ${fault.id}`;
            expect.soft(row.actual, cell).toBe(row.expected);
            expect.soft(row.problems, cell).toEqual([]);
            expect.soft(row.leaked, `${cell} leaked`).toBe(0);
            expect.soft(row.duplicates, `${cell} duplicates`).toBe(0);
          }
        }
      },
      600_000,
    );
  });
}
