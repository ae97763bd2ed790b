// The worker environment `images warm` has the running gateway create for it, through core's own path:
// `environments.create` for the profile with a fresh idempotency key (core runs the provision, with the node
// runtime only it can hand over), a bounded wait for ready with a progress line on every state change, and
// `environments.destroy` afterwards on every path (success, failure, Ctrl-C), waiting until core lists it
// destroyed or no longer. Which environment is ours: the one `environments.create` answered with, or, when that
// call did not answer (failure, Ctrl-C), the only environment of this provider that was not there before; when
// several are new (another run's meanwhile) none is destroyed and the error says so, next to why the run failed.
import { randomUUID } from "node:crypto";
import { messageOf } from "../infra/index.js";
import { CliError } from "./errors.js";
import { type GatewayCall, ourEnvironments, type WorkerEnvironment } from "./gateway.js";

export interface EnvironmentTimings {
  /** How long the create may run before the command gives up (and destroys what it made). */
  readyTimeoutMs: number;
  destroyTimeoutMs: number;
  pollMs: number;
}

export const DEFAULT_TIMINGS: EnvironmentTimings = {
  readyTimeoutMs: 15 * 60_000,
  destroyTimeoutMs: 4 * 60_000,
  pollMs: 2_000,
};

const seconds = (ms: number) => `${(ms / 1000).toFixed(1)} s`;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function listOurs(call: GatewayCall): Promise<WorkerEnvironment[]> {
  return ourEnvironments(await call("environments.list", {}));
}

export interface WarmEnvironment {
  environmentId: string;
  leaseId: string | undefined;
  readyMs: number;
}

/**
 * Creates a worker of `profileId`, runs `use` on it once it is ready, and destroys it whatever happens. An
 * unreachable gateway is refused before anything is created.
 */
export async function withWorkerEnvironment<T>(
  input: { call: GatewayCall; profileId: string; progress: (line: string) => void; signal: AbortSignal },
  timings: EnvironmentTimings,
  use: (environment: WarmEnvironment) => Promise<T>,
): Promise<T> {
  const { call, progress, signal } = input;
  let before: Set<string>;
  try {
    before = new Set((await listOurs(call)).map((e) => e.environmentId));
  } catch (error) {
    throw new CliError(
      `the gateway did not answer environments.list: ${messageOf(error)}`,
      "images warm builds the base image on the running gateway: start it (`openclaw gateway run`), or point this command at it with --url/--port and --token",
    );
  }
  const started = Date.now();
  let environmentId: string | undefined;
  let outcome: { ok: true; value: T } | { ok: false; error: unknown };
  try {
    const creating = call(
      "environments.create",
      { profileId: input.profileId, idempotencyKey: randomUUID() },
      { timeoutMs: timings.readyTimeoutMs, signal },
    ).then((created) => {
      const id = (created as { id?: unknown } | null)?.id;
      if (typeof id === "string") environmentId = id;
      return created;
    });
    let settled = false;
    creating.then(
      () => {
        settled = true;
      },
      () => {
        settled = true;
      },
    );
    // Progress while core provisions: the environment's state, on each change.
    let last = "";
    while (!settled && !signal.aborted) {
      await Promise.race([sleep(timings.pollMs), creating.catch(() => undefined)]);
      if (settled) break;
      // A listing that failed (a busy gateway) says nothing new: the last line stands.
      const mine = await newEnvironment(call, before).catch(() => null);
      if (mine === null) continue;
      const state = mine ? `${mine.environmentId}: ${mine.state}` : "requested";
      if (state !== last) progress(`environment ${state} (${seconds(Date.now() - started)})`);
      last = state;
    }
    try {
      await creating;
    } catch (error) {
      signal.throwIfAborted();
      throw new CliError(
        `the gateway's worker for the base image did not become ready: ${messageOf(error)}${await recordedError(call, before)}`,
        "Run `openclaw vercel-sandbox doctor`, then images warm again",
      );
    }
    signal.throwIfAborted();
    if (environmentId === undefined) {
      throw new CliError(
        "the gateway answered environments.create without an environment id",
        "The running gateway may predate this plugin version: restart it, then run images warm again",
      );
    }
    const ready = await readyState(call, environmentId, started, timings, signal);
    progress(`environment ${ready.environmentId} ready (${seconds(Date.now() - started)})`);
    outcome = {
      ok: true,
      value: await use({ environmentId: ready.environmentId, leaseId: ready.leaseId, readyMs: Date.now() - started }),
    };
  } catch (error) {
    outcome = { ok: false, error };
  }
  // Not with `signal`: after Ctrl-C the environment is destroyed all the same. What is left behind is said,
  // and never hides why the command failed.
  const left = await cleanUp(call, environmentId, before, timings, progress);
  if (!outcome.ok) {
    if (!left) throw outcome.error;
    throw new CliError(`${messageOf(outcome.error)}; and ${left.message}`, left.remedy);
  }
  if (left) throw left;
  return outcome.value;
}

const DESTROY_BY_HAND =
  "Run `openclaw vercel-sandbox status`, then `openclaw gateway call environments.destroy` for it";

/**
 * Destroys this run's environment: the one `environments.create` answered with, else the only new one. Answers
 * what could not be done (an environment left, or one that cannot be told apart from another run's).
 */
async function cleanUp(
  call: GatewayCall,
  environmentId: string | undefined,
  before: Set<string>,
  timings: EnvironmentTimings,
  progress: (line: string) => void,
): Promise<CliError | undefined> {
  let id = environmentId;
  if (id === undefined) {
    let fresh: WorkerEnvironment[];
    try {
      fresh = await newEnvironments(call, before);
    } catch (error) {
      return new CliError(
        `the gateway did not list its environments, so whether this run left one is unknown: ${messageOf(error)}`,
        DESTROY_BY_HAND,
      );
    }
    if (fresh.length > 1) {
      const ids = fresh.map((e) => e.environmentId).join(", ");
      return new CliError(
        `this run's environment, one of ${ids} (created meanwhile), could not be told apart and was not destroyed`,
        DESTROY_BY_HAND,
      );
    }
    id = fresh[0]?.environmentId;
  }
  if (id === undefined) return undefined;
  try {
    await destroy(call, id, timings, progress);
    return undefined;
  } catch (error) {
    return error instanceof CliError
      ? error
      : new CliError(`environment ${id} was not destroyed: ${messageOf(error)}`, DESTROY_BY_HAND);
  }
}

/** The environments of this provider that were not listed before. */
async function newEnvironments(call: GatewayCall, before: Set<string>): Promise<WorkerEnvironment[]> {
  return (await listOurs(call)).filter((e) => !before.has(e.environmentId));
}

/** The only environment of this provider that was not listed before, if exactly one is. */
async function newEnvironment(call: GatewayCall, before: Set<string>): Promise<WorkerEnvironment | undefined> {
  const fresh = await newEnvironments(call, before);
  return fresh.length === 1 ? fresh[0] : undefined;
}

/**
 * Why core's record says the provision failed. core answers a failed environments.create with a generic
 * "worker environment creation failed"; the provider's own error is on the failed environment's record.
 */
async function recordedError(call: GatewayCall, before: Set<string>): Promise<string> {
  const failed = await newEnvironment(call, before).catch(() => undefined);
  return failed?.error ? ` (environment ${failed.environmentId} ${failed.state}: ${failed.error})` : "";
}

/** core answers environments.create once the provision ended; its listing then says ready or failed. */
async function readyState(
  call: GatewayCall,
  environmentId: string,
  started: number,
  timings: EnvironmentTimings,
  signal: AbortSignal,
): Promise<WorkerEnvironment> {
  for (;;) {
    const found = (await listOurs(call)).find((e) => e.environmentId === environmentId);
    if (found?.state === "ready") return found;
    if (found?.state === "failed" || found?.state === "destroyed") {
      throw new CliError(
        `the gateway's worker for the base image ${found.state}${found.error ? `: ${found.error}` : ""}`,
        "Run `openclaw vercel-sandbox doctor`, then images warm again",
      );
    }
    if (Date.now() - started > timings.readyTimeoutMs) {
      throw new CliError(
        `the gateway's worker for the base image was not ready within ${seconds(timings.readyTimeoutMs)}`,
        "Look at the gateway's log for the provision, then run images warm again",
      );
    }
    signal.throwIfAborted();
    await sleep(timings.pollMs);
  }
}

async function destroy(
  call: GatewayCall,
  environmentId: string,
  timings: EnvironmentTimings,
  progress: (line: string) => void,
): Promise<void> {
  const started = Date.now();
  await call("environments.destroy", { environmentId }, { timeoutMs: timings.destroyTimeoutMs });
  for (;;) {
    const state = (await listOurs(call)).find((e) => e.environmentId === environmentId)?.state;
    if (state === undefined || state === "destroyed") break;
    if (Date.now() - started > timings.destroyTimeoutMs) {
      throw new CliError(
        `environment ${environmentId} was still ${state} ${seconds(timings.destroyTimeoutMs)} after its destroy`,
        DESTROY_BY_HAND,
      );
    }
    await sleep(timings.pollMs);
  }
  progress(`environment ${environmentId} destroyed (${seconds(Date.now() - started)})`);
}
