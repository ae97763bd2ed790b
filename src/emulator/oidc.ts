// The emulator's own OIDC-style tokens: what `vercel env pull` puts in VERCEL_OIDC_TOKEN for a
// linked project, minted by the emulator for its one team and project. A token is a compact JWT
// (HS256 over a per-instance random key that never leaves the process) whose payload carries the
// claims the SDK reads (`owner_id` → teamId, `project_id` → projectId) and an `exp`. The SDK never
// verifies the signature; the emulator does, so a forged, unsigned (`alg: none`), expired or
// foreign-project token is refused. Refresh works the way the SDK refreshes: it re-reads
// VERCEL_OIDC_TOKEN before every request and switches to a different token it finds there, so a
// caller that puts a fresh token from `issue` into the environment is switched over mid-session.
import { createHmac, randomBytes, timingSafeEqual } from "node:crypto";

/** The claims of one emulator token (the subset of Vercel's OIDC claims the SDK and the emulator read). */
export interface OidcClaims {
  iss: string;
  sub: string;
  aud: string;
  owner_id: string;
  project_id: string;
  environment: "development";
  iat: number;
  nbf: number;
  exp: number;
}

export interface IssueOptions {
  /** Seconds until `exp`; default the issuer's lifetime. Zero or negative mints an already expired token (tests). */
  expiresInSeconds?: number;
  /** The project claim; default the emulator's (another one mints a token the emulator refuses, for tests). */
  projectId?: string;
  /** The team claim; default the emulator's. */
  teamId?: string;
}

/** Why a JWT-shaped bearer token is refused; the message never contains the token. */
export type OidcVerdict =
  | { ok: true; claims: OidcClaims }
  | { ok: false; reason: "malformed" | "signature" | "expired" | "scope" };

export const OIDC_ISSUER = "https://oidc.vercel-sandbox-emulator.invalid";
/** Vercel's OIDC tokens from `vercel env pull` live 12 hours; the emulator's default is the same. */
export const DEFAULT_OIDC_LIFETIME_SECONDS = 12 * 60 * 60;

const b64url = (data: Buffer | string) => Buffer.from(data).toString("base64url");
const HEADER = b64url(JSON.stringify({ alg: "HS256", typ: "JWT", kid: "emulator" }));

export class OidcIssuer {
  private readonly key = randomBytes(32);

  constructor(
    private readonly teamId: string,
    private readonly projectId: string,
    private readonly lifetimeSeconds = DEFAULT_OIDC_LIFETIME_SECONDS,
    private readonly now: () => number = Date.now,
  ) {}

  issue(options: IssueOptions = {}): string {
    const iat = Math.floor(this.now() / 1000);
    const teamId = options.teamId ?? this.teamId;
    const projectId = options.projectId ?? this.projectId;
    const claims: OidcClaims = {
      iss: OIDC_ISSUER,
      sub: `owner:${teamId}:project:${projectId}:environment:development`,
      aud: `https://vercel.com/${teamId}`,
      owner_id: teamId,
      project_id: projectId,
      environment: "development",
      iat,
      nbf: iat,
      exp: iat + (options.expiresInSeconds ?? this.lifetimeSeconds),
    };
    const body = `${HEADER}.${b64url(JSON.stringify(claims))}`;
    return `${body}.${this.sign(body)}`;
  }

  /** Checks signature first (nothing in an unsigned token is trusted), then expiry, then scope. */
  verify(token: string): OidcVerdict {
    const parts = token.split(".");
    if (parts.length !== 3) return { ok: false, reason: "malformed" };
    const [header, payload, signature] = parts as [string, string, string];
    if (header !== HEADER) return { ok: false, reason: "signature" };
    const expected = Buffer.from(this.sign(`${header}.${payload}`), "base64url");
    const given = Buffer.from(signature, "base64url");
    if (given.length !== expected.length || !timingSafeEqual(given, expected))
      return { ok: false, reason: "signature" };
    let claims: OidcClaims;
    try {
      claims = JSON.parse(Buffer.from(payload, "base64url").toString("utf8")) as OidcClaims;
    } catch {
      return { ok: false, reason: "malformed" };
    }
    const now = this.now() / 1000;
    if (typeof claims.exp !== "number" || claims.exp <= now || claims.nbf > now)
      return { ok: false, reason: "expired" };
    if (claims.owner_id !== this.teamId || claims.project_id !== this.projectId) return { ok: false, reason: "scope" };
    return { ok: true, claims };
  }

  private sign(body: string): string {
    return createHmac("sha256", this.key).update(body).digest("base64url");
  }
}
