// Redaction in one place. Every error and log line that leaves the provider passes through `redact`:
// secret values the provider has handled (tokens, setup codes) are replaced wherever they appear, and
// token-shaped text (bearer headers, JWTs, the value after a secret's name) is masked even when we never saw
// the value. Only values: the names of secrets and of the variables that hold them stay readable.
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

/** Secret-shaped values we may never have seen: they are masked whole, whatever precedes them. */
const SHAPES: RegExp[] = [
  /(bearer\s+)[A-Za-z0-9._~+/=-]{8,}/gi,
  /\beyJ[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]*/g,
  // The credential of an authorization header, whatever its scheme (Basic, Token, …).
  /(authorization["']?\s*[:=]\s*["']?[A-Za-z]+\s+)[^\s"',}]{8,}/gi,
];

/** `token: value`, `secret=value`, `"password": "value"`: the value after a secret's name, quote and all. */
const FIELD = /((?:token|secret|password|setup[_-]?code|authorization)["']?\s*[:=]\s*)(["']?)([^\s"',}]{4,})/gi;
/**
 * What follows a secret's name in prose is no value: a word ("token: environment variable VERCEL_TOKEN is not
 * set") or the name of the variable that holds it. Those stay, so messages keep saying what to set. A quoted
 * value (JSON) is a value even when it reads like a word.
 */
const WORD = /^[A-Za-z][a-z]{0,19}[.,;:!?)]*$/;
const VARIABLE_NAME = /^\$?[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+$/;

function maskField(match: string, name: string, quote: string, value: string): string {
  if (VARIABLE_NAME.test(value) || (!quote && WORD.test(value))) return match;
  return `${name}${quote}[redacted]`;
}

export function redact(text: string): string {
  let out = text;
  // One pass, longest first: a secret containing a shorter one is masked whole, and a short secret never
  // rewrites the placeholder of another.
  if (known.size > 0) {
    const secrets = [...known.keys()].sort((a, b) => b.length - a.length).map(escapeRegExp);
    out = out.replace(new RegExp(secrets.join("|"), "g"), "[redacted]");
  }
  for (const shape of SHAPES) {
    out = out.replace(shape, (_match, prefix?: string) => `${typeof prefix === "string" ? prefix : ""}[redacted]`);
  }
  return out.replace(FIELD, maskField);
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}

export function messageOf(error: unknown): string {
  if (error instanceof Error) return redact(error.message);
  return redact(String(error));
}
