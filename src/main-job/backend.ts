// Which backend `npm start` targets: Vercel when real credentials are in the environment (an OIDC token, or a
// token with its team and project, as the SDK reads them), the embedded emulator otherwise. Pure.

export type Backend =
  | { kind: "embedded" }
  | { kind: "vercel"; auth: "oidc" | "token"; teamId?: string; projectId?: string };

export function backendFrom(env: NodeJS.ProcessEnv): Backend {
  if (env.VERCEL_OIDC_TOKEN) return { kind: "vercel", auth: "oidc" };
  if (env.VERCEL_TOKEN && env.VERCEL_TEAM_ID && env.VERCEL_PROJECT_ID) {
    return { kind: "vercel", auth: "token", teamId: env.VERCEL_TEAM_ID, projectId: env.VERCEL_PROJECT_ID };
  }
  return { kind: "embedded" };
}

/**
 * The steps that cannot run against Vercel from this machine, and why: VM1 on Vercel must call the scripted
 * model and the host, which run here without an address a Vercel sandbox can reach.
 */
export const VERCEL_UNREACHABLE =
  "VM1 on Vercel must reach the scripted model and the host (its idle notifications), which run on this machine " +
  "without a public address; deploy the host (examples/host) and a model endpoint VM1 can reach, or unset the " +
  "Vercel credentials to run the whole cycle on the embedded emulator";
