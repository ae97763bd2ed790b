// Who may use the loopback API: the bearer token, the team and the project of one emulator
// instance. Every request passes `authorize` before fault injection, routing or any handler, so
// nothing (a sandbox on the host's loopback, another local user, a request relayed by the egress
// proxy) reaches the API without the token. Answers follow Vercel's REST API: a missing or wrong
// token is 403 `forbidden` (Vercel answers 403, not 401, with `missingToken`/`invalidToken`), a
// team the token does not belong to is 403 `forbidden`, an unknown project is 404 `not_found`.
// Besides its opaque token the emulator accepts the OIDC-style JWTs it signs itself (oidc.ts), as
// Vercel accepts a project's OIDC token; any other JWT (unsigned, forged, expired, another project)
// is 403. The presented token is never echoed, logged or kept.

import { createHash, randomBytes, timingSafeEqual } from "node:crypto";
import type { IncomingMessage } from "node:http";
import { HttpError } from "./http.js";
import type { OidcIssuer } from "./oidc.js";

/** The one team and project an emulator serves, and the token that opens them. */
export interface ApiScope {
  token: string;
  teamId: string;
  projectId: string;
  /** Mints and verifies the emulator's OIDC-style JWTs (oidc.ts); absent, every JWT is refused. */
  oidc?: OidcIssuer;
}

/** Thrown by startLocalSandboxApi for a `token` option the SDK could not send as given. */
export class EmulatorTokenError extends Error {
  constructor(reason: string) {
    super(`The emulator's \`token\` option ${reason}. Pass an opaque string, or omit it for a random one.`);
    this.name = "EmulatorTokenError";
  }
}

/** A random opaque token, or the caller's after checking the SDK would send it unchanged. */
export function tokenFrom(option: string | undefined): string {
  if (option === undefined) return `emu_${randomBytes(24).toString("hex")}`;
  if (!/^[\x21-\x7e]{16,}$/.test(option)) {
    throw new EmulatorTokenError("must be at least 16 printable ASCII characters without spaces");
  }
  // The SDK treats a three-part token as an OIDC JWT: it overwrites teamId from the payload and
  // swaps the token for a fresh OIDC one before every request.
  if (option.split(".").length === 3) throw new EmulatorTokenError("looks like a JWT, which the SDK rewrites");
  return option;
}

/** Digests first, so the comparison takes the same time whatever the lengths. */
function sameToken(presented: string, expected: string): boolean {
  const digest = (s: string) => createHash("sha256").update(s).digest();
  return timingSafeEqual(digest(presented), digest(expected));
}

const forbidden = (message: string, details: Record<string, unknown> = {}) =>
  new HttpError(403, "forbidden", message, {}, details);

/** The project a request names outside its body: `?projectId=` (get, patch, delete, fork, drives) or `?project=` (lists). */
function projectOf(url: URL): string | null {
  return url.searchParams.get("projectId") ?? url.searchParams.get("project");
}

/** Refuses the request unless it carries the token and stays in the emulator's team and project. */
export function authorize(scope: ApiScope, req: IncomingMessage, url: URL): void {
  const match = /^Bearer\s+(\S+)\s*$/i.exec(req.headers.authorization ?? "");
  if (!match) {
    throw forbidden("The request is missing an authentication token (Authorization: Bearer <token>)", {
      missingToken: true,
    });
  }
  assertToken(scope, match[1]!);
  // The SDK sends `teamId` on every request; a request without one would act outside the team.
  if (url.searchParams.get("teamId") !== scope.teamId) {
    throw forbidden("Not authorized: the token has no access to this team (check `teamId`)");
  }
  assertProject(scope, projectOf(url));
}

/**
 * The opaque token, or a JWT the emulator signed that is unexpired and names its team and project.
 * Every refusal is Vercel's 403 `forbidden`; a bad or expired token also carries `invalidToken`.
 */
function assertToken(scope: ApiScope, presented: string): void {
  if (presented.split(".").length !== 3) {
    if (!sameToken(presented, scope.token))
      throw forbidden("Not authorized: the token is not valid", { invalidToken: true });
    return;
  }
  const verdict = scope.oidc?.verify(presented) ?? { ok: false, reason: "signature" };
  if (verdict.ok) return;
  if (verdict.reason === "expired") {
    throw forbidden("Not authorized: the OIDC token has expired (refresh VERCEL_OIDC_TOKEN)", { invalidToken: true });
  }
  if (verdict.reason === "scope") throw forbidden("Not authorized: the OIDC token is for another team or project");
  throw forbidden("Not authorized: the token is not valid", { invalidToken: true });
}

/** 404 for a project other than the emulator's; `null` (the endpoint sends none) passes. */
export function assertProject(scope: ApiScope, projectId: string | null | undefined): void {
  if (projectId === null || projectId === undefined) return;
  if (projectId !== scope.projectId) {
    throw new HttpError(404, "not_found", "Project not found (check `projectId`)");
  }
}
