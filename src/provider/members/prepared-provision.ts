// Prepared workspaces (OpenClaw 2026.9.4 and later): when core hands `provision` a project with `preparation`
// (a session's, or a ready worker's `purpose: "reserve"`), its `prepare` adapter runs core's setup through
// `runScriptWithBudget` and refuses a transport without it. This wraps `provision` so the transport our
// preparation passes gains that method: the script is rendered with the budget the command still has, then run
// as any other project script. A project without `preparation` (every 2026.9.2 provision) passes through as it
// came, so nothing changes there.
import type { WorkerProvider } from "openclaw/plugin-sdk/plugin-entry";
import type { ProjectPreparation } from "../../infra/index.js";

/** The command limit of a project script on the box (src/preparation/box.ts), less a minute to report. */
export const SETUP_BUDGET_MS = 14 * 60_000;

type Transport = Parameters<ProjectPreparation["prepare"]>[0];
/** The 2026.9.4+ transport member 2026.9.2's type lacks. */
type BudgetedTransport = Transport & {
  runScriptWithBudget(createScript: (timeoutMs: number) => string, signal: AbortSignal): Promise<string>;
};
/** The 2026.9.4+ project fields 2026.9.2's type lacks. */
export type PreparedProject = ProjectPreparation & {
  preparation?: { key: string; cacheKey: string; purpose: "session" | "reserve"; demandAtMs: number };
};

export function withBudget(transport: Transport): BudgetedTransport {
  return {
    ...transport,
    runScriptWithBudget: (createScript, signal) => transport.runScript(createScript(SETUP_BUDGET_MS), signal),
  };
}

/** The project as `provision` sees it: with preparation, its `prepare` hands core a budgeted transport. */
export function preparedProject(project: PreparedProject): ProjectPreparation {
  if (!project.preparation) return project;
  const prepare = project.prepare;
  return { ...project, prepare: (transport) => prepare(withBudget(transport)) };
}

export function withPreparedWorkspaces(provision: WorkerProvider["provision"]): WorkerProvider["provision"] {
  return (profile, operationId, options) => {
    const project = options?.project as PreparedProject | undefined;
    if (!project?.preparation) return provision(profile, operationId, options);
    return provision(profile, operationId, { ...options, project: preparedProject(project) });
  };
}
