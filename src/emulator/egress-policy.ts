// Pure egress decisions for the session proxy (see egress-proxy.ts), following the SDK's
// documented semantics: `allow` lists hosts (exact, `*.suffix` for subdomains only, `*` for
// everything; the keys when it is the rule-map form), `subnets.allow` admits addresses whatever
// their name, and `subnets.deny` wins over both. IP literals are hosts too, so `allow:
// ["127.0.0.1"]` admits that address. Header-transform and forward rules are NOT applied.
// The host's own addresses (loopback, unspecified, link-local, its interfaces' addresses) are
// special: only a policy that names them explicitly (an IP literal or a `subnets.allow` entry) admits
// them, so neither `*`, `allow-all` nor an allowed name that resolves to 127.0.0.1 reaches the
// emulator's API or any other service of the host.
import type { LookupAddress } from "node:dns";
import { BlockList, isIP } from "node:net";

type Json = Record<string, unknown>;

export interface EgressRules {
  everything: boolean;
  nothing: boolean;
  hosts: string[];
  allowSubnets: BlockList;
  denySubnets: BlockList;
  hasAllowSubnets: boolean;
}

/** Lower case, no trailing dot, no IPv6 brackets: the form hosts are compared in. */
export function normalizeHost(host: string): string {
  return host
    .trim()
    .toLowerCase()
    .replace(/^\[(.*)\]$/, "$1")
    .replace(/\.$/, "");
}

function subnets(list: unknown): { blocks: BlockList; count: number } {
  const blocks = new BlockList();
  let count = 0;
  for (const cidr of Array.isArray(list) ? list : []) {
    if (typeof cidr !== "string") continue;
    const [network = "", bits] = cidr.trim().split("/");
    const family = isIP(network);
    if (!family) continue;
    const type = family === 4 ? "ipv4" : "ipv6";
    const prefix = bits === undefined ? (family === 4 ? 32 : 128) : Number(bits);
    if (!Number.isInteger(prefix) || prefix < 0 || prefix > (family === 4 ? 32 : 128)) continue;
    blocks.addSubnet(network, prefix, type);
    count++;
  }
  return { blocks, count };
}

/** The rules of a request-shape policy (`{mode}` or `{allow, subnets}`), read at connect time. */
export function egressRules(policy: Json): EgressRules {
  const allow = policy.allow;
  const hosts = (Array.isArray(allow) ? allow : allow && typeof allow === "object" ? Object.keys(allow) : [])
    .filter((h): h is string => typeof h === "string")
    .map(normalizeHost);
  const nets = (policy.subnets ?? {}) as Json;
  const allowed = subnets(nets.allow);
  return {
    everything: policy.mode === "allow-all",
    nothing: policy.mode === "deny-all",
    hosts,
    allowSubnets: allowed.blocks,
    denySubnets: subnets(nets.deny).blocks,
    hasAllowSubnets: allowed.count > 0,
  };
}

/** Whether the allow-list names this host: exactly, by `*.suffix` (subdomains only), or by `*`. */
export function hostAllowed(rules: EgressRules, host: string): boolean {
  const h = normalizeHost(host);
  return rules.hosts.some(
    (entry) => entry === "*" || entry === h || (entry.startsWith("*.") && h.endsWith(entry.slice(1))),
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

/** Whether an address is the host itself: loopback, unspecified, link-local, or one of `own` (its interfaces). */
export function isHostAddress(address: string, own: ReadonlySet<string> = new Set()): boolean {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address)?.[1];
  const plain = mapped ?? address;
  return own.has(plain) || HOST_RANGES.check(plain, familyOf(plain));
}

/** Whether the policy names this address itself: as an IP literal on the allow-list or in `subnets.allow`. */
function namesAddress(rules: EgressRules, address: string): boolean {
  return rules.hosts.includes(normalizeHost(address)) || rules.allowSubnets.check(address, familyOf(address));
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
  return addresses.filter(
    ({ address }) =>
      !rules.denySubnets.check(address, familyOf(address)) &&
      (named || rules.allowSubnets.check(address, familyOf(address))) &&
      (!isHostAddress(address, own) || namesAddress(rules, address)),
  );
}

/** Whether resolving the host could admit anything: an unlisted name is only worth a lookup for subnets.allow. */
export function worthResolving(rules: EgressRules, host: string): boolean {
  if (rules.nothing) return false;
  return rules.everything || rules.hasAllowSubnets || hostAllowed(rules, host);
}

/** Whether the policy names any address at all (an IP literal or a subnet): only then can one be direct. */
export function namesAnyAddress(rules: EgressRules): boolean {
  return !rules.nothing && (rules.hasAllowSubnets || rules.hosts.some((host) => isIP(host) !== 0));
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
    .filter((address) => namesAddress(rules, address) && !rules.denySubnets.check(address, "ipv4"))
    .sort();
}
