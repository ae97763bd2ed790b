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
 * Why the cycle cannot run against Vercel from this machine, step by step: a Vercel VM1 would have to call the
 * scripted model and the host, and both run here, without an address a Vercel sandbox can reach.
 */
export const VERCEL_NOT_RUN: ReadonlyArray<[step: string, why: string]> = [
  [
    "1. VM1 on Vercel (gateway + plugin)",
    "not started: nothing after it could run (below), and a VM1 left waiting would be billed",
  ],
  ["3. agent turns", "the scripted model runs on this machine, which has no address a Vercel sandbox can reach"],
  [
    "2, 5, 6. host (messages, idle notification, sleep and wake)",
    "VM1 notifies the host over HTTP; deploy examples/host as a Vercel Function and point suspend.notifyUrl at it",
  ],
];
