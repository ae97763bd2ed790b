// The worker environment `images warm` has the running gateway create for it, through core's own path:
// `environments.create` for the profile with a fresh idempotency key (core runs the provision, with the node
// runtime only it can hand over), a bounded wait for ready with a progress line on every state change, and
// `environments.destroy` afterwards on every path (success, failure, Ctrl-C), waiting until core lists it
// destroyed or no longer. Which environment is ours: the one `environments.create` answered with, or, when that
// call did not answer (failure, Ctrl-C), the only environment of this provider that was not there before.
import { randomUUID } from "node:crypto";
import { messageOf } from "../infra/index.js";
import { CliError } from "./commands.js";
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
        `the gateway's worker for the base image did not become ready: ${messageOf(error)}`,
        "Run `openclaw vercel-sandbox doctor`, then images warm again",
      );
    }
    signal.throwIfAborted();
    const ready = await readyState(call, environmentId as string, started, timings, signal);
    progress(`environment ${ready.environmentId} ready (${seconds(Date.now() - started)})`);
    return await use({ environmentId: ready.environmentId, leaseId: ready.leaseId, readyMs: Date.now() - started });
  } finally {
    // Not with `signal`: after Ctrl-C the environment is destroyed all the same.
    environmentId ??= (await newEnvironment(call, before).catch(() => undefined))?.environmentId;
    if (environmentId) await destroy(call, environmentId, timings, progress);
  }
}

/** The only environment of this provider that was not listed before, if exactly one is. */
async function newEnvironment(call: GatewayCall, before: Set<string>): Promise<WorkerEnvironment | undefined> {
  const fresh = (await listOurs(call)).filter((e) => !before.has(e.environmentId));
  return fresh.length === 1 ? fresh[0] : undefined;
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
        "Run `openclaw vercel-sandbox status`, then `openclaw gateway call environments.destroy` for it",
      );
    }
    await sleep(timings.pollMs);
  }
  progress(`environment ${environmentId} destroyed (${seconds(Date.now() - started)})`);
}
