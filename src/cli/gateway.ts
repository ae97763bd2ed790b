// What the CLI learns from the running gateway: the worker environments core holds for this provider (which
// leases it owns) from `environments.list`, and the in-process state (keepalive, idle clock) from this
// plugin's read-only `vercelSandbox.status` method. An unreachable gateway is a result, not a failure: every
// command still reports what it can see without it, and says how to connect.

import { type GatewayStatus, STATUS_METHOD } from "../gateway-status/index.js";
import { messageOf } from "../infra/index.js";
import { PROVIDER_ID } from "../provider/index.js";

/** One gateway RPC; `timeoutMs` overrides the command's --timeout (a long call such as environments.create). */
export type GatewayCall = (
  method: string,
  params: unknown,
  options?: { timeoutMs?: number; signal?: AbortSignal },
) => Promise<unknown>;

export interface WorkerEnvironment {
  environmentId: string;
  leaseId?: string;
  state: string;
  error?: string;
  /** Ids of the sessions attached to the worker. */
  sessions?: string[];
}

export type GatewayView =
  | {
      reachable: true;
      environments: WorkerEnvironment[];
      /** Null when the running gateway has not loaded this version of the plugin (no status method). */
      status: GatewayStatus | null;
      statusError?: string;
    }
  | { reachable: false; error: string; remedy: string };

/** The environments of our provider in an `environments.list` payload (unknown shapes yield none). */
export function ourEnvironments(payload: unknown): WorkerEnvironment[] {
  const list = (payload as { environments?: unknown } | null)?.environments;
  if (!Array.isArray(list)) return [];
  const out: WorkerEnvironment[] = [];
  for (const env of list as Array<{ id?: unknown; worker?: Record<string, unknown> }>) {
    const worker = env?.worker;
    if (!worker || worker.providerId !== PROVIDER_ID || typeof env.id !== "string") continue;
    out.push({
      environmentId: env.id,
      ...(typeof worker.leaseId === "string" ? { leaseId: worker.leaseId } : {}),
      state: typeof worker.state === "string" ? worker.state : "unknown",
      ...(typeof worker.error === "string" ? { error: worker.error } : {}),
      ...(Array.isArray(worker.attachedSessionIds)
        ? { sessions: worker.attachedSessionIds.filter((s): s is string => typeof s === "string").slice(0, 64) }
        : {}),
    });
  }
  return out;
}

function isGatewayStatus(value: unknown): value is GatewayStatus {
  const v = value as Partial<GatewayStatus> | null;
  return v?.version === 1 && Array.isArray(v.keepalive);
}

export async function readGateway(call: GatewayCall): Promise<GatewayView> {
  let environments: WorkerEnvironment[];
  try {
    environments = ourEnvironments(await call("environments.list", {}));
  } catch (error) {
    return {
      reachable: false,
      error: `the gateway did not answer environments.list: ${messageOf(error)}`,
      remedy: "Start the gateway (`openclaw gateway run`), or point this command at it with --url/--port and --token",
    };
  }
  try {
    const status = await call(STATUS_METHOD, {});
    if (!isGatewayStatus(status)) throw new Error("unexpected answer shape");
    return { reachable: true, environments, status };
  } catch (error) {
    return {
      reachable: true,
      environments,
      status: null,
      statusError:
        `${STATUS_METHOD} failed (${messageOf(error)}); the running gateway may predate this plugin version: ` +
        "restart it to load the installed one",
    };
  }
}
