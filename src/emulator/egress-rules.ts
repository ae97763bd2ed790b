// The firewall's request rules (SDK 3.3+: `allow: { "<domain>": [rule, …] }`), pure: which rules a
// host has, which rule claims a request, and what it does. Semantics follow the SDK's types and
// validators (network-policy.d.ts, validators.ts): a rule without `match` applies to every request to
// its domain; `match` needs every dimension it names (methods ORed, header and query matchers ANDed,
// each satisfied by some entry); rules run in declaration order and the first that matches claims the
// request, so a trailing `response` rule answers what earlier rules did not claim. A claimed request
// is sent on with headers set (`transform`), sent to `forwardURL` instead, or answered (`response`);
// an unclaimed one goes to its destination unchanged. Regexes are RE2's, as Vercel documents (rule-regex.ts):
// matched in linear time, since the proxy matches on the one event loop that serves every sandbox.
import { isIP } from "node:net";
import { normalizeHost } from "./egress-policy.js";
import { InvalidRuleRegex, ruleRegex } from "./rule-regex.js";

type Json = Record<string, unknown>;

export interface Matcher {
  exact?: string;
  startsWith?: string;
  regex?: string;
}

export interface KeyValueMatcher {
  key?: Matcher;
  value?: Matcher;
}

export interface RuleMatch {
  path?: Matcher;
  method?: string[];
  queryString?: KeyValueMatcher[];
  headers?: KeyValueMatcher[];
}

export interface DirectResponse {
  statusCode: number;
  headers?: Record<string, string>;
  body?: string;
  contentType?: string;
}

export type RequestRule = { match?: RuleMatch } & (
  | { transform: Array<{ headers?: Record<string, string> }> }
  | { forwardURL: string }
  | { response: DirectResponse }
);

/** What the proxy sees of a request: its method, path (no query), query and headers (names lower-case). */
export interface RuleRequest {
  method: string;
  path: string;
  query: URLSearchParams;
  headers: Record<string, string | string[] | undefined>;
}

/** Thrown for a policy whose rules Vercel would refuse (the SDK's own validators), before anything is stored. */
export class RuleShapeError extends Error {
  constructor(reason: string) {
    super(`networkPolicy: ${reason}`);
    this.name = "RuleShapeError";
  }
}

const PROXY_MANAGED = new Set(["connection", "content-length", "transfer-encoding"]);
const BODYLESS = new Set([204, 205, 304]);

const isObject = (v: unknown): v is Json => typeof v === "object" && v !== null && !Array.isArray(v);
const stringRecord = (v: unknown) => isObject(v) && Object.values(v).every((x) => typeof x === "string");

function checkMatcher(m: unknown, where: string): void {
  if (m === undefined) return;
  if (!isObject(m)) throw new RuleShapeError(`${where} must be an object`);
  for (const key of ["exact", "startsWith", "regex"] as const) {
    if (m[key] !== undefined && typeof m[key] !== "string")
      throw new RuleShapeError(`${where}.${key} must be a string`);
  }
  if (typeof m.regex === "string") {
    try {
      ruleRegex(m.regex);
    } catch (error) {
      if (!(error instanceof InvalidRuleRegex)) throw error;
      throw new RuleShapeError(`${where}.regex ${error.message}`);
    }
  }
}

function checkMatch(match: unknown, where: string): void {
  if (match === undefined) return;
  if (!isObject(match)) throw new RuleShapeError(`${where}.match must be an object`);
  checkMatcher(match.path, `${where}.match.path`);
  if (match.method !== undefined && !(Array.isArray(match.method) && match.method.every((x) => typeof x === "string")))
    throw new RuleShapeError(`${where}.match.method must be a list of methods`);
  for (const list of ["queryString", "headers"] as const) {
    const entries = match[list];
    if (entries === undefined) continue;
    if (!Array.isArray(entries)) throw new RuleShapeError(`${where}.match.${list} must be a list`);
    entries.forEach((kv, i) => {
      if (!isObject(kv)) throw new RuleShapeError(`${where}.match.${list}[${i}] must be an object`);
      checkMatcher(kv.key, `${where}.match.${list}[${i}].key`);
      checkMatcher(kv.value, `${where}.match.${list}[${i}].value`);
    });
  }
}

function checkResponse(r: unknown, where: string): void {
  if (!isObject(r)) throw new RuleShapeError(`${where}.response must be an object`);
  const status = r.statusCode;
  if (!Number.isInteger(status) || (status as number) < 200 || (status as number) > 599)
    throw new RuleShapeError(`${where}.response.statusCode must be an integer from 200 to 599`);
  if (r.headers !== undefined && !stringRecord(r.headers))
    throw new RuleShapeError(`${where}.response.headers must map names to strings`);
  const names = Object.keys((r.headers as Json) ?? {}).map((n) => n.toLowerCase());
  if (names.some((n) => PROXY_MANAGED.has(n)))
    throw new RuleShapeError(`${where}.response.headers cannot set proxy-managed headers`);
  if (new Set(names).size !== names.length)
    throw new RuleShapeError(`${where}.response.headers cannot contain duplicate names`);
  if (r.body !== undefined) {
    if (typeof r.body !== "string") throw new RuleShapeError(`${where}.response.body must be a string`);
    if (typeof r.contentType !== "string")
      throw new RuleShapeError(`${where}.response.contentType must be provided when body is set`);
    if (BODYLESS.has(status as number))
      throw new RuleShapeError(`${where}.response.body is not allowed on status codes 204, 205, and 304`);
  }
}

function checkForwardUrl(value: unknown, where: string): void {
  let url: URL;
  try {
    url = new URL(String(value));
  } catch {
    throw new RuleShapeError(`${where}.forwardURL is not a URL`);
  }
  if (typeof value !== "string" || !/^https?:$/.test(url.protocol) || url.search || url.hash || url.username)
    throw new RuleShapeError(`${where}.forwardURL must be an https URL without credentials, query or fragment`);
}

/** Refuses rule maps Vercel would refuse: one action per rule, the SDK's matcher and response shapes. */
export function checkRules(policy: Json): void {
  const allow = policy.allow;
  if (!isObject(allow)) return;
  for (const [domain, rules] of Object.entries(allow)) {
    if (!Array.isArray(rules)) throw new RuleShapeError(`allow["${domain}"] must be a list of rules`);
    rules.forEach((rule, i) => {
      const where = `allow["${domain}"][${i}]`;
      if (!isObject(rule)) throw new RuleShapeError(`${where} must be an object`);
      const actions = ["transform", "forwardURL", "response"].filter((k) => rule[k] !== undefined);
      if (actions.length !== 1)
        throw new RuleShapeError(`${where}: exactly one of transform, forwardURL or response must be given`);
      checkMatch(rule.match, where);
      if (rule.transform !== undefined) {
        if (
          !Array.isArray(rule.transform) ||
          !rule.transform.every((t) => isObject(t) && (t.headers === undefined || stringRecord(t.headers)))
        )
          throw new RuleShapeError(`${where}.transform must be a list of { headers: { name: value } }`);
      }
      if (rule.forwardURL !== undefined) checkForwardUrl(rule.forwardURL, where);
      if (rule.response !== undefined) checkResponse(rule.response, where);
    });
  }
}

/**
 * The rules that govern a host: those of its exact entry, else of the longest `*.suffix` entry that
 * covers it, else of `*`. Empty when the host has none (its traffic is tunnelled untouched).
 */
export function rulesFor(policy: Json, host: string): RequestRule[] {
  const allow = policy.allow;
  if (!isObject(allow)) return [];
  const h = normalizeHost(host);
  if (h === undefined) return [];
  let best: { rank: number; rules: RequestRule[] } | undefined;
  for (const [entry, rules] of Object.entries(allow)) {
    if (!Array.isArray(rules) || rules.length === 0) continue;
    const text = entry.trim().toLowerCase();
    let rank = -1;
    if (text === "*") rank = 0;
    else if (text.startsWith("*.")) {
      const suffix = normalizeHost(text.slice(2));
      if (suffix && isIP(h) === 0 && h.endsWith(`.${suffix}`)) rank = suffix.length + 1;
    } else if (normalizeHost(text) === h) rank = Number.MAX_SAFE_INTEGER;
    if (rank >= 0 && (!best || rank > best.rank)) best = { rank, rules: rules as RequestRule[] };
  }
  return best?.rules ?? [];
}

function matches(m: Matcher | undefined, value: string): boolean {
  if (!m) return true;
  if (m.exact !== undefined && value !== m.exact) return false;
  if (m.startsWith !== undefined && !value.startsWith(m.startsWith)) return false;
  if (m.regex !== undefined && !ruleRegex(m.regex).test(value)) return false;
  return true;
}

/** Header names are case-insensitive: they are compared lower-cased, and so are a key matcher's literals. */
function lowerCased(m: Matcher | undefined): Matcher | undefined {
  if (!m) return m;
  return { ...m, exact: m.exact?.toLowerCase(), startsWith: m.startsWith?.toLowerCase() };
}

function entriesMatch(matchers: KeyValueMatcher[] | undefined, entries: Array<[string, string]>, lowerKeys: boolean) {
  return (matchers ?? []).every((kv) =>
    entries.some(([key, value]) => {
      return matches(lowerKeys ? lowerCased(kv.key) : kv.key, key) && matches(kv.value, value);
    }),
  );
}

function headerEntries(headers: RuleRequest["headers"]): Array<[string, string]> {
  return Object.entries(headers).flatMap(([name, value]) =>
    value === undefined
      ? []
      : (Array.isArray(value) ? value : [value]).map((v): [string, string] => [name.toLowerCase(), v]),
  );
}

export function ruleMatches(rule: RequestRule, request: RuleRequest): boolean {
  const m = rule.match;
  if (!m) return true;
  if (m.method && !m.method.some((method) => method.toUpperCase() === request.method.toUpperCase())) return false;
  if (!matches(m.path, request.path)) return false;
  if (!entriesMatch(m.queryString, [...request.query.entries()], false)) return false;
  return entriesMatch(m.headers, headerEntries(request.headers), true);
}

/** The first rule, in declaration order, that claims the request; undefined when none does. */
export function claimingRule(rules: RequestRule[], request: RuleRequest): RequestRule | undefined {
  return rules.find((rule) => ruleMatches(rule, request));
}

/** The request's headers with a transform rule's headers set (replacing any the sandbox sent under that name). */
export function transformedHeaders(
  headers: RuleRequest["headers"],
  transforms: Array<{ headers?: Record<string, string> }>,
): Record<string, string | string[]> {
  const out: Record<string, string | string[]> = {};
  for (const [name, value] of Object.entries(headers)) if (value !== undefined) out[name.toLowerCase()] = value;
  for (const t of transforms)
    for (const [name, value] of Object.entries(t.headers ?? {})) out[name.toLowerCase()] = value;
  return out;
}
