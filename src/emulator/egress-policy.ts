// Pure egress decisions for the session proxy (see egress-proxy.ts), following the SDK's
// documented semantics: `allow` lists hosts (exact, `*.suffix` for subdomains only, `*` for
// everything; the keys when it is the rule-map form), `subnets.allow` admits addresses whatever
// their name, and `subnets.deny` wins over both. IP literals are hosts too, so `allow:
// ["127.0.0.1"]` admits that address. Request rules (transform, forwardURL, response) are applied by
// egress-intercept.ts to the hosts whose entry has any (egress-rules.ts).
// The host's own addresses (loopback, unspecified, link-local, its interfaces' addresses) are
// special: only a policy that names them explicitly (an IP literal or a `subnets.allow` entry) admits
// them, so neither `*`, `allow-all` nor an allowed name that resolves to 127.0.0.1 reaches the
// emulator's API or any other service of the host.
// Every address here is compared in its canonical spelling (ip-literal.ts): the policy's entries, the
// addresses asked for or resolved, and the host's own, so `[::ffff:7f00:1]` or `0x7f.1` is 127.0.0.1.
import type { LookupAddress } from "node:dns";
import { BlockList, isIP } from "node:net";
import { embeddedIpv4, ipLiteral, parseHost, parseSubnet } from "../infra/index.js";

type Json = Record<string, unknown>;

export interface EgressRules {
  everything: boolean;
  nothing: boolean;
  /** Canonical: `*`, `*.suffix`, lower-case names, canonical addresses. */
  hosts: string[];
  allowSubnets: Subnets;
  denySubnets: Subnets;
}

/** The canonical spelling of a host (ip-literal.ts), or undefined when it is not a valid host at all. */
export function normalizeHost(host: string): string | undefined {
  try {
    const parsed = parseHost(host.trim());
    return parsed.kind === "name" ? parsed.name : parsed.address;
  } catch {
    return undefined;
  }
}

/** An allow-list entry in canonical form; an entry that is no valid host (or a wildcard of an address) matches nothing. */
function allowEntry(entry: string): string | undefined {
  const text = entry.trim().toLowerCase();
  if (text === "*") return text;
  if (!text.startsWith("*.")) return normalizeHost(text);
  const suffix = normalizeHost(text.slice(2));
  return suffix !== undefined && isIP(suffix) === 0 ? `*.${suffix}` : undefined;
}

/**
 * A list of subnets, matched per family: node's BlockList alone would match IPv4 addresses against IPv6
 * rules through their mapped form, so `::/0` would name every IPv4 address, loopback included.
 * IPv4-mapped rules of /96 or longer are IPv4 rules already (ip-literal.ts parseSubnet).
 */
export interface Subnets {
  count: number;
  check(address: string): boolean;
}

function subnets(list: unknown): Subnets {
  const v4 = new BlockList();
  const v6 = new BlockList();
  let count = 0;
  for (const cidr of Array.isArray(list) ? list : []) {
    if (typeof cidr !== "string") continue;
    try {
      const { address, prefix, family } = parseSubnet(cidr);
      if (family === 4) v4.addSubnet(address, prefix, "ipv4");
      else v6.addSubnet(address, prefix, "ipv6");
      count++;
    } catch {
      // Not a subnet: it names nothing (and a typo like `10.0.0.1/` must not become a /0).
    }
  }
  return {
    count,
    check: (address) => {
      const family = isIP(address);
      return family === 4 ? v4.check(address, "ipv4") : family === 6 && v6.check(address, "ipv6");
    },
  };
}

/** The rules of a request-shape policy (`{mode}` or `{allow, subnets}`), read at connect time. */
export function egressRules(policy: Json): EgressRules {
  const allow = policy.allow;
  const hosts = (Array.isArray(allow) ? allow : allow && typeof allow === "object" ? Object.keys(allow) : [])
    .filter((h): h is string => typeof h === "string")
    .map(allowEntry)
    .filter((h): h is string => h !== undefined);
  const nets = (policy.subnets ?? {}) as Json;
  const allowed = subnets(nets.allow);
  return {
    everything: policy.mode === "allow-all",
    nothing: policy.mode === "deny-all",
    hosts,
    allowSubnets: allowed,
    denySubnets: subnets(nets.deny),
  };
}

/** Whether the allow-list names this host: exactly, by `*.suffix` (subdomains of a name only), or by `*`. */
export function hostAllowed(rules: EgressRules, host: string): boolean {
  const h = normalizeHost(host);
  if (h === undefined) return false;
  const name = isIP(h) === 0;
  return rules.hosts.some(
    (entry) => entry === "*" || entry === h || (name && entry.startsWith("*.") && h.endsWith(entry.slice(1))),
  );
}

const familyOf = (address: string) => (isIP(address) === 6 ? "ipv6" : "ipv4");

const HOST_RANGES = new BlockList();
HOST_RANGES.addSubnet("127.0.0.0", 8, "ipv4");
HOST_RANGES.addSubnet("0.0.0.0", 8, "ipv4");
HOST_RANGES.addSubnet("169.254.0.0", 16, "ipv4");
HOST_RANGES.addAddress("::1", "ipv6");
HOST_RANGES.addAddress("::", "ipv6");
HOST_RANGES.addSubnet("fe80::", 10, "ipv6");

function hostSide(address: string, own: ReadonlySet<string>): boolean {
  return own.has(address) || HOST_RANGES.check(address, familyOf(address));
}

/**
 * Whether an address (canonical, ip-literal.ts) is the host itself: loopback, unspecified, link-local, one
 * of `own` (its interfaces, canonical), or an IPv6 transition form that carries such an IPv4 address.
 */
export function isHostAddress(address: string, own: ReadonlySet<string> = new Set()): boolean {
  const embedded = isIP(address) === 6 ? embeddedIpv4(address) : undefined;
  return hostSide(address, own) || (embedded !== undefined && hostSide(embedded, own));
}

/** Whether the policy names this address itself: as an IP literal on the allow-list or in `subnets.allow`. */
function namesAddress(rules: EgressRules, address: string): boolean {
  return rules.hosts.includes(address) || rules.allowSubnets.check(address);
}

/** Resolved or literal addresses in canonical form (a lookup may answer `::ffff:127.0.0.1`), once each. */
function canonical(addresses: LookupAddress[]): LookupAddress[] {
  const seen = new Map<string, LookupAddress>();
  for (const { address } of addresses) {
    const ip = ipLiteral(address);
    if (ip && !seen.has(ip.address)) seen.set(ip.address, ip);
  }
  return [...seen.values()];
}

/** The resolved addresses the proxy may connect to; empty means refuse. `own`: the host's interface addresses. */
export function allowedAddresses(
  rules: EgressRules,
  host: string,
  addresses: LookupAddress[],
  own: ReadonlySet<string> = new Set(),
): LookupAddress[] {
  if (rules.nothing) return [];
  const named = rules.everything || hostAllowed(rules, host);
  return canonical(addresses).filter(
    ({ address }) =>
      !rules.denySubnets.check(address) &&
      (named || rules.allowSubnets.check(address)) &&
      (!isHostAddress(address, own) || namesAddress(rules, address)),
  );
}

/** Whether resolving the host could admit anything: an unlisted name is only worth a lookup for subnets.allow. */
export function worthResolving(rules: EgressRules, host: string): boolean {
  if (rules.nothing) return false;
  return rules.everything || rules.allowSubnets.count > 0 || hostAllowed(rules, host);
}

/** Whether the policy names any address at all (an IP literal or a subnet): only then can one be direct. */
export function namesAnyAddress(rules: EgressRules): boolean {
  return !rules.nothing && (rules.allowSubnets.count > 0 || rules.hosts.some((host) => isIP(host) !== 0));
}

/**
 * The host's own IPv4 addresses the sandbox may reach DIRECTLY (egress-routes.ts): those the policy names
 * explicitly (an IP literal on the allow-list or inside `subnets.allow`) and `subnets.deny` does not cover.
 * Loopback never qualifies: it cannot be routed from another namespace.
 */
export function directDestinations(rules: EgressRules, own: Iterable<string>): string[] {
  if (!namesAnyAddress(rules)) return [];
  return [...new Set(own)]
    .filter((address) => isIP(address) === 4 && !HOST_RANGES.check(address, "ipv4"))
    .filter((address) => namesAddress(rules, address) && !rules.denySubnets.check(address))
    .sort();
}
