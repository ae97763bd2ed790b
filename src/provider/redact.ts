// Redaction in one place. Every error and log line that leaves the provider passes through `redact`:
// secret values the provider has handled (tokens, setup codes) are replaced wherever they appear, and
// token-shaped text (bearer headers, JWTs) is masked even when we never saw the value.
//
// Any non-empty registered value is masked, however short: a short secret makes messages ugly ("[redacted]"
// where its characters appeared), never leaky. The registry is bounded because it is scanned for every
// message: a lease's enrollment secrets are dropped when the lease ends, and past the bound the least
// recently registered value goes first (credentials are re-registered on every use, so they stay).
const MAX_SECRETS = 256;
/** Owner of values that live as long as the process (credentials), as opposed to one lease's secrets. */
const PROCESS = "";
const known = new Map<string, Set<string>>();

/** Remember a secret value so it is masked from every later message; `leaseId` ties it to that lease. */
export function registerSecret(value: string | undefined, leaseId: string = PROCESS): void {
  if (!value) return;
  const owners = known.get(value) ?? new Set<string>();
  owners.add(leaseId);
  known.delete(value);
  known.set(value, owners);
  while (known.size > MAX_SECRETS) known.delete(known.keys().next().value as string);
}

/** The lease ended: forget the secrets only it used. */
export function forgetSecrets(leaseId: string): void {
  for (const [value, owners] of known) {
    if (owners.delete(leaseId) && owners.size === 0) known.delete(value);
  }
}

/** How many values are registered (the bound is observable, not just promised). */
export function knownSecretCount(): number {
  return known.size;
}

const PATTERNS: RegExp[] = [
  /(bearer\s+)[A-Za-z0-9._~+/=-]{8,}/gi,
  /\beyJ[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]*/g,
  /((?:token|secret|password|setup[_-]?code|authorization)["']?\s*[:=]\s*["']?)[^\s"',}]{4,}/gi,
];

export function redact(text: string): string {
  let out = text;
  // One pass, longest first: a secret containing a shorter one is masked whole, and a short secret never
  // rewrites the placeholder of another.
  if (known.size > 0) {
    const secrets = [...known.keys()].sort((a, b) => b.length - a.length).map(escapeRegExp);
    out = out.replace(new RegExp(secrets.join("|"), "g"), "[redacted]");
  }
  for (const pattern of PATTERNS) {
    out = out.replace(pattern, (_match, prefix?: string) => `${typeof prefix === "string" ? prefix : ""}[redacted]`);
  }
  return out;
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}

export function messageOf(error: unknown): string {
  if (error instanceof Error) return redact(error.message);
  return redact(String(error));
}
