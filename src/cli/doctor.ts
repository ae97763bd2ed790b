// `openclaw vercel-sandbox doctor`: read-only checks, each with a remedy when it does not pass. It reads the
// config, this process's environment (credentials are resolved, never printed), Vercel (one tagged list per
// profile, which proves token, team and project together) and, if it answers, the gateway. It changes nothing.

import { messageOf } from "../infra/index.js";
import { TAG_SCOPE } from "../provider/index.js";
import type { CredentialSource, ProfileSettings } from "../settings/index.js";
import type { VercelClient } from "../vercel/index.js";
import { defaultSecretResolver, resolveCredentials } from "../vercel/index.js";
import {
  type Check,
  type CheckStatus,
  checkEgress,
  checkHeartbeat,
  checkNode,
  checkOrigin,
  checkProfiles,
  worst,
} from "./checks.js";
import { type GatewayCall, readGateway } from "./gateway.js";
import { enrollmentOrigin } from "./origin.js";
import type { ProfileEntry } from "./profiles.js";
import { remedyFor } from "./sandboxes.js";
import { formatTable, indented } from "./table.js";

export interface DoctorReport {
  ok: boolean;
  status: CheckStatus;
  checks: Check[];
}

export interface DoctorInput {
  config: unknown;
  profiles: readonly ProfileEntry[];
  env: NodeJS.ProcessEnv;
  nodeVersion: string;
  client: VercelClient;
  gateway: GatewayCall;
  /** Bound on each Vercel check. */
  timeoutMs?: number;
}

/** Where each credential comes from, by name only. */
function describeSource(source: CredentialSource): string {
  if (source.kind === "oidc") return "OIDC (VERCEL_OIDC_TOKEN)";
  const token =
    "env" in source.token ? `$${source.token.env}` : `SecretRef ${source.token.ref.source}:${source.token.ref.id}`;
  const where = (s: { value: string } | { env: string }) => ("value" in s ? "settings" : `$${s.env}`);
  return `token from ${token}, team from ${where(source.teamId)}, project from ${where(source.projectId)}`;
}

async function checkVercel(id: string, settings: ProfileSettings, scope: string, input: DoctorInput): Promise<Check[]> {
  if (settings.backend === "embedded") {
    const message = "embedded backend: no Vercel account is used; the emulator runs inside the gateway process";
    return [{ id: "credentials", subject: id, status: "skip", message }];
  }
  const source = describeSource(settings.credentials);
  try {
    await resolveCredentials(settings.credentials, input.env, defaultSecretResolver(input.env));
  } catch (error) {
    return [
      {
        id: "credentials",
        subject: id,
        status: "fail",
        message: `${messageOf(error)} (${source})`,
        remedy: remedyFor(error, id),
      },
      { id: "vercel", subject: id, status: "skip", message: "not tried without credentials" },
    ];
  }
  const credentials: Check = { id: "credentials", subject: id, status: "ok", message: `resolved (${source})` };
  try {
    const project = await input.client.project(settings);
    const ours = await project.list({ [TAG_SCOPE]: scope }, AbortSignal.timeout(input.timeoutMs ?? 20_000));
    const where = settings.apiUrl ? ` at ${settings.apiUrl}` : "";
    const message = `team and project reachable${where}; ${ours.length} sandbox(es) tagged with scope ${scope}`;
    return [credentials, { id: "vercel", subject: id, status: "ok", message }];
  } catch (error) {
    return [
      credentials,
      { id: "vercel", subject: id, status: "fail", message: messageOf(error), remedy: remedyFor(error, id) },
    ];
  }
}

async function checkGateway(call: GatewayCall): Promise<Check> {
  const view = await readGateway(call);
  if (!view.reachable) {
    return { id: "gateway", status: "warn", message: `${view.error} (status and gc need it)`, remedy: view.remedy };
  }
  if (view.statusError) {
    return { id: "gateway", status: "warn", message: view.statusError, remedy: "Restart the gateway" };
  }
  return {
    id: "gateway",
    status: "ok",
    message: `reachable; ${view.environments.length} worker environment(s) of ours`,
  };
}

export async function runDoctor(input: DoctorInput): Promise<DoctorReport> {
  const valid = input.profiles.flatMap((p) => (p.ok ? [p] : []));
  const origin = enrollmentOrigin(input.config);
  const gatewayHost = origin.url ? new URL(origin.url).hostname : undefined;
  const vercel = await Promise.all(valid.map((p) => checkVercel(p.id, p.settings, p.scope, input)));
  const checks: Check[] = [
    checkNode(input.nodeVersion),
    ...checkProfiles(input.profiles),
    ...vercel.flat(),
    checkOrigin(origin, new Set(valid.map((p) => p.settings.backend))),
    ...valid.map((p) => checkEgress(p.id, p.settings, gatewayHost)),
    checkHeartbeat(input.config),
    await checkGateway(input.gateway),
  ];
  const status = worst(checks);
  return { ok: status !== "fail", status, checks };
}

export function renderDoctor(report: DoctorReport): string {
  const mark = { ok: "ok", warn: "WARN", fail: "FAIL", skip: "skip" } as const;
  const table = formatTable(
    [
      { header: "", cell: (c: Check) => mark[c.status] },
      { header: "CHECK", cell: (c) => (c.subject ? `${c.id} (${c.subject})` : c.id) },
      { header: "RESULT", cell: (c) => c.message },
    ],
    report.checks,
  );
  const remedies = report.checks
    .filter((c) => c.remedy)
    .map((c) => `- ${c.id}${c.subject ? ` (${c.subject})` : ""}: ${indented(c.remedy ?? "", "    ")}`);
  const summary = report.ok
    ? report.status === "warn"
      ? "Doctor: no failures, some warnings."
      : "Doctor: all checks passed."
    : "Doctor: some checks failed.";
  return [table, ...(remedies.length ? ["", "What to do next:", ...remedies] : []), "", summary].join("\n");
}
