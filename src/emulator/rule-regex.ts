// The regular expressions of firewall rules (egress-rules.ts), as Vercel documents them: RE2 syntax and semantics,
// matched in time linear in the input by RE2JS (a pure-JavaScript port of RE2). The egress proxy matches requests
// on the one event loop that serves the API and every sandbox, so a backtracking engine would let one pattern such
// as `(a+)+$` freeze them all. A pattern RE2 refuses (lookaround, backreferences, …) is refused when a policy is
// created or updated, naming it. Compiled patterns are kept, bounded, as every request through a rule needs them.
import { RE2JS, RE2JSException } from "re2js";

/** A pattern RE2 cannot compile; the message names it and says why. */
export class InvalidRuleRegex extends Error {
  constructor(
    readonly pattern: string,
    reason: string,
  ) {
    super(`${JSON.stringify(pattern)} is not a valid RE2 regular expression (${reason})`);
    this.name = "InvalidRuleRegex";
  }
}

/** Compiled patterns kept; past it the cache starts over (policies hold few distinct patterns). */
const CACHED = 256;
const compiled = new Map<string, RE2JS>();

/** The compiled pattern; throws InvalidRuleRegex for one RE2 refuses. Its `test` searches anywhere in the value. */
export function ruleRegex(pattern: string): RE2JS {
  const known = compiled.get(pattern);
  if (known) return known;
  let regex: RE2JS;
  try {
    regex = RE2JS.compile(pattern);
  } catch (error) {
    if (!(error instanceof RE2JSException)) throw error;
    throw new InvalidRuleRegex(pattern, error.message.replace(/^error parsing regexp: /, ""));
  }
  if (compiled.size >= CACHED) compiled.clear();
  compiled.set(pattern, regex);
  return regex;
}
