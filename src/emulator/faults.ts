// Programmable faults for reliability tests: answer a chosen status (429 + Retry-After, 5xx),
// add latency, reset the connection before the handler runs, or run the handler fully and then
// drop the response ("commit then drop": the side effect happened, the client sees a failure).
export interface FaultRule {
  method?: string;
  /** A string matches a pathname equal to it or ending with it; a RegExp is tested against it. */
  path?: string | RegExp;
  status?: number;
  retryAfterS?: number;
  delayMs?: number;
  reset?: boolean;
  dropAfterCommit?: boolean;
  /** How many requests the rule applies to before it is removed (default 1). */
  times?: number;
}

export interface Faults {
  inject(rule: FaultRule): void;
  clear(): void;
}

export class FaultTable implements Faults {
  private rules: Array<FaultRule & { left: number }> = [];

  inject(rule: FaultRule): void {
    this.rules.push({ ...rule, left: rule.times ?? 1 });
  }

  clear(): void {
    this.rules = [];
  }

  /** The first rule matching this request, consumed once; undefined when none applies. */
  take(method: string, pathname: string): FaultRule | undefined {
    const index = this.rules.findIndex((r) => matches(r, method, pathname));
    if (index < 0) return undefined;
    const rule = this.rules[index]!;
    rule.left -= 1;
    if (rule.left <= 0) this.rules.splice(index, 1);
    return rule;
  }
}

function matches(rule: FaultRule, method: string, pathname: string): boolean {
  if (rule.method && rule.method.toUpperCase() !== method.toUpperCase()) return false;
  if (rule.path === undefined) return true;
  if (typeof rule.path === "string") return pathname === rule.path || pathname.endsWith(rule.path);
  rule.path.lastIndex = 0;
  return rule.path.test(pathname);
}
