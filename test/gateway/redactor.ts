// The one place the harness redacts: the gateway token and any secret a test hands over (e.g. the Vercel
// token) are replaced in every piece of text the harness returns or throws, so a failing test cannot leak them.

export class Redactor {
  #secrets: string[] = [];

  /** Remembers secrets to redact from now on; empty strings are ignored (they would match everywhere). */
  add(...secrets: string[]): void {
    for (const secret of secrets) if (secret) this.#secrets.push(secret);
  }

  /** Replaces every secret this redactor knows about. */
  redact = (text: string): string => {
    let out = text;
    for (const secret of this.#secrets) out = out.split(secret).join("[REDACTED]");
    return out;
  };
}
