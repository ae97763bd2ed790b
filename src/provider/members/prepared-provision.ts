// Prepared workspaces (OpenClaw 2026.9.4 and later): when core hands `provision` a project with `preparation`
// (a session's, or a ready worker's `purpose: "reserve"`), core registers the prepared workspace its `prepare`
// adapter reported, and fails the bootstrap without one. This wraps `provision` for that case:
// - the transport our preparation hands core's `prepare` gains `runScriptWithBudget` (core refuses a transport
//   without it): the script is rendered with the budget the command still has, then run as any project script;
// - a provision that ends without having prepared (a replay that adopted a worker already enrolled: it never
//   prepares again) recovers the completed workspace with `project.inspectPreparedWorkspace`, which only reads
//   the box: no transfer, no setup, no capture.
// A project without `preparation` (every 2026.9.2 provision) passes through as it came, so nothing changes there.
import type { WorkerProvider } from "openclaw/plugin-sdk/plugin-entry";
import type { ProjectPreparation } from "../../infra/index.js";
import { projectTransport } from "../../preparation/index.js";
import type { ProviderParts } from "../parts.js";
import { settingsOf } from "./profile.js";

/** The command limit of a project script on the box (src/preparation/box.ts), less a minute to report. */
export const SETUP_BUDGET_MS = 14 * 60_000;

type Transport = Parameters<ProjectPreparation["prepare"]>[0];
type RunScript = Transport["runScript"];
/** The 2026.9.4+ transport member 2026.9.2's type lacks. */
type BudgetedTransport = Transport & {
  runScriptWithBudget(createScript: (timeoutMs: number) => string, signal: AbortSignal): Promise<string>;
};
/** The 2026.9.4+ project fields 2026.9.2's type lacks. */
export type PreparedProject = ProjectPreparation & {
  preparation?: { key: string; cacheKey: string; purpose: "session" | "reserve"; demandAtMs: number };
  inspectPreparedWorkspace?: (transport: { runScript: RunScript }) => Promise<void>;
};

/** A worker enrolled by an earlier attempt whose sandbox this replay cannot find running. */
export class PreparedWorkspaceUnavailableError extends Error {
  override readonly name = "PreparedWorkspaceUnavailableError";
}

export function withBudget(transport: Transport): BudgetedTransport {
  return {
    ...transport,
    runScriptWithBudget: (createScript, signal) => transport.runScript(createScript(SETUP_BUDGET_MS), signal),
  };
}

/** How the wrapper reaches an enrolled worker's box: the lease's sandbox, looked up without resuming it. */
export type EnrolledScripts = (profile: unknown, operationId: string, signal?: AbortSignal) => Promise<RunScript>;

export function enrolledScripts({ projectFor, allocationFor }: Pick<ProviderParts, "projectFor" | "allocationFor">) {
  const scripts: EnrolledScripts = async (profile, operationId, signal) => {
    const settings = settingsOf(profile);
    const { sandboxName } = allocationFor(settings, operationId);
    const project = await projectFor(settings);
    const sandbox = await project.find(sandboxName, signal);
    if (sandbox?.status !== "running") {
      throw new PreparedWorkspaceUnavailableError(
        `vercel-sandbox: the enrolled worker ${sandboxName} is not running, so its prepared workspace cannot be read`,
      );
    }
    return projectTransport(project.box(sandbox)).runScript;
  };
  return scripts;
}

export function withPreparedWorkspaces(
  provision: WorkerProvider["provision"],
  scripts: EnrolledScripts,
): WorkerProvider["provision"] {
  return async (profile, operationId, options) => {
    const project = options?.project as PreparedProject | undefined;
    if (!project?.preparation) return provision(profile, operationId, options);
    let prepared = false;
    const prepare = project.prepare;
    const budgeted: ProjectPreparation = {
      ...project,
      prepare: (transport) => {
        prepared = true;
        return prepare(withBudget(transport));
      },
    };
    const lease = await provision(profile, operationId, { ...options, project: budgeted });
    if (!prepared && project.inspectPreparedWorkspace) {
      const runScript = await scripts(profile, operationId, options?.signal);
      await project.inspectPreparedWorkspace({ runScript });
    }
    return lease;
  };
}
