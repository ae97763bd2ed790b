// Redaction in one place. Every error and log line that leaves the provider passes through `redact`:
// secret values the provider has handled (tokens, setup codes) are replaced wherever they appear, and
// token-shaped text (bearer headers, JWTs) is masked even when we never saw the value.
const known = new Set<string>();
const MIN_SECRET_LENGTH = 6;

/** Remember a secret value so it is masked from every later message. */
export function registerSecret(value: string | undefined): void {
  if (value && value.length >= MIN_SECRET_LENGTH) known.add(value);
}

const PATTERNS: RegExp[] = [
  /(bearer\s+)[A-Za-z0-9._~+/=-]{8,}/gi,
  /\beyJ[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]*/g,
  /((?:token|secret|password|setup[_-]?code|authorization)["']?\s*[:=]\s*["']?)[^\s"',}]{4,}/gi,
];

export function redact(text: string): string {
  let out = text;
  for (const secret of known) out = out.split(secret).join("[redacted]");
  for (const pattern of PATTERNS) {
    out = out.replace(pattern, (_match, prefix?: string) => `${typeof prefix === "string" ? prefix : ""}[redacted]`);
  }
  return out;
}

export function messageOf(error: unknown): string {
  if (error instanceof Error) return redact(error.message);
  return redact(String(error));
}
