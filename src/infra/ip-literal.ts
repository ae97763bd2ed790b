// One spelling per host, for the egress checks (egress-policy.ts): an IP address can be written many
// ways that all connect to the same place (`127.1`, `2130706433`, `0x7f.1`, `0177.0.0.1`, `127.0.0.1.`,
// `[::ffff:7f00:1]`, `0:0:0:0:0:ffff:127.0.0.1`, `fe80::1%lo`…: what URL parsers, inet_aton/getaddrinfo
// and inet_pton accept), and a check that compares strings with the host's own addresses is passed by
// respelling one. Every host the proxy is asked for, every address a lookup returns, every address a
// policy names and every address of the host goes through here first, and the proxy then connects to
// the canonical address it checked. Parsing is ipaddr.js's; this file decides what counts as an
// address rather than a name (the WHATWG URL rule: a host whose last label is a number is an IPv4
// address or nothing) and what the canonical form is: IPv4 dotted decimal (IPv4-mapped IPv6 included,
// since it connects to the IPv4 address), IPv6 as RFC 5952 without a zone.
import ipaddr from "ipaddr.js";

/** A host that is neither a valid IP address in any accepted spelling nor a valid DNS name. */
export class HostSpellingError extends Error {
  constructor(
    readonly host: string,
    readonly reason: string,
  ) {
    super(`${JSON.stringify(host)} is not a valid host: ${reason}`);
    this.name = "HostSpellingError";
  }
}

export interface IpAddress {
  address: string;
  family: 4 | 6;
}

export type ParsedHost = ({ kind: "address" } & IpAddress) | { kind: "name"; name: string };

/** A CIDR in canonical form; an IPv4-mapped IPv6 network of /96 or longer becomes the IPv4 network. */
export interface Subnet extends IpAddress {
  prefix: number;
}

/** A label WHATWG URL and inet_aton read as a number: decimal, octal (leading 0) or hex (0x, even bare). */
const NUMERIC_LABEL = /^(\d+|0x[0-9a-f]*)$/;
const NAME_LABEL = /^[a-z0-9_](?:[a-z0-9_-]{0,61}[a-z0-9_])?$/;
const ZONE = /^[0-9a-z_.-]+$/;

function ipv4(input: string, text: string): IpAddress {
  // ipaddr.js reads every inet_aton form except a bare `0x`, which inet_aton and URL parsers read as 0.
  const spelled = text
    .split(".")
    .map((part) => (part === "0x" ? "0" : part))
    .join(".");
  if (!ipaddr.IPv4.isValid(spelled)) throw new HostSpellingError(input, "not a valid IPv4 address");
  return { address: ipaddr.IPv4.parse(spelled).toString(), family: 4 };
}

function ipv6(input: string, text: string): IpAddress {
  const [spelled = "", zone, extra] = text.split("%");
  if (extra !== undefined || (zone !== undefined && !ZONE.test(zone))) {
    throw new HostSpellingError(input, "not a valid IPv6 zone");
  }
  // inet_pton and URL parsers take the dotted tail of IPv6 in plain decimal only. It is turned into its two
  // groups here because ipaddr.js reads `::a.b.c.d` (IPv4-compatible, ::/96) as IPv4-mapped, which it is not.
  const tail = /:([^:]*\.[^:]*)$/.exec(spelled)?.[1];
  if (tail !== undefined && !ipaddr.IPv4.isValidFourPartDecimal(tail)) {
    throw new HostSpellingError(input, "the IPv4 part of an IPv6 address must be four decimal numbers");
  }
  const [a = 0, b = 0, c = 0, d = 0] = tail === undefined ? [] : ipaddr.IPv4.parse(tail).octets;
  const hex =
    tail === undefined
      ? spelled
      : `${spelled.slice(0, -tail.length)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  if (!ipaddr.IPv6.isValid(hex)) throw new HostSpellingError(input, "not a valid IPv6 address");
  const address = ipaddr.IPv6.parse(hex);
  if (address.isIPv4MappedAddress()) return { address: address.toIPv4Address().toString(), family: 4 };
  return { address: address.toRFC5952String(), family: 6 };
}

/**
 * What `host` (as a URL, a CONNECT authority, a lookup answer or a policy gives it: any case, IPv6 in
 * brackets or not, one trailing dot allowed) names: an address in canonical form, or a DNS name in lower
 * case without the trailing dot. Throws HostSpellingError for anything else.
 */
export function parseHost(host: string): ParsedHost {
  const text = host.toLowerCase();
  if (text.startsWith("[") || text.endsWith("]")) {
    const inner = /^\[([^[\]]*)\]$/.exec(text)?.[1];
    if (inner === undefined || !inner.includes(":")) {
      throw new HostSpellingError(host, "brackets hold an IPv6 address and nothing else");
    }
    return { kind: "address", ...ipv6(host, inner) };
  }
  if (text.includes(":")) return { kind: "address", ...ipv6(host, text) };
  const name = text.endsWith(".") ? text.slice(0, -1) : text;
  const labels = name.split(".");
  if (NUMERIC_LABEL.test(labels.at(-1)!)) return { kind: "address", ...ipv4(host, name) };
  if (name.length > 253 || !labels.every((label) => NAME_LABEL.test(label))) {
    throw new HostSpellingError(host, "not an IP address and not a DNS name");
  }
  return { kind: "name", name };
}

/** The canonical address `host` spells, or undefined when it is a name (or not a valid host at all). */
export function ipLiteral(host: string): IpAddress | undefined {
  try {
    const parsed = parseHost(host);
    return parsed.kind === "address" ? { address: parsed.address, family: parsed.family } : undefined;
  } catch {
    return undefined;
  }
}

/** `network[/prefix]` with the network in any spelling parseHost accepts; a bare address is a /32 or /128. */
export function parseSubnet(cidr: string): Subnet {
  const [network = "", bits, extra] = cidr.trim().split("/");
  if (extra !== undefined || (bits !== undefined && !/^\d{1,3}$/.test(bits))) {
    throw new HostSpellingError(cidr, "the prefix length must be a number after one /");
  }
  const parsed = parseHost(network);
  if (parsed.kind !== "address") throw new HostSpellingError(cidr, "a subnet needs an IP address");
  const spelledV6 = network.includes(":");
  const width = spelledV6 ? 128 : 32;
  const prefix = bits === undefined ? width : Number(bits);
  if (prefix > width) throw new HostSpellingError(cidr, `the prefix length is at most ${width}`);
  if (!spelledV6 || parsed.family === 6) return { address: parsed.address, family: parsed.family, prefix };
  // An IPv4-mapped network: the IPv4 network when it lies inside ::ffff:0:0/96, else the IPv6 one
  // (node's BlockList matches IPv4 addresses against IPv6 rules through their mapped form).
  if (prefix >= 96) return { address: parsed.address, family: 4, prefix: prefix - 96 };
  return { address: ipaddr.IPv4.parse(parsed.address).toIPv4MappedAddress().toRFC5952String(), family: 6, prefix };
}

/**
 * The IPv4 address a canonical IPv6 address carries by a transition form whose traffic a host with the
 * matching setup (a NAT64, SIIT or 6to4 gateway of its own) would deliver to that IPv4 address:
 * IPv4-compatible (::a.b.c.d), SIIT (::ffff:0:a.b.c.d), NAT64 (64:ff9b::a.b.c.d) and 6to4
 * (2002:AABB:CCDD::). Linux without such a setup does not connect them locally; they are checked anyway.
 */
export function embeddedIpv4(address: string): string | undefined {
  if (!ipaddr.IPv6.isValid(address)) return undefined;
  const parts = ipaddr.IPv6.parse(address).parts;
  const v4 = (high: number, low: number) => [high >> 8, high & 255, low >> 8, low & 255].join(".");
  const zeros = (from: number, to: number) => parts.slice(from, to).every((part) => part === 0);
  if (zeros(0, 6)) return v4(parts[6]!, parts[7]!);
  if (zeros(0, 4) && parts[4] === 0xffff && parts[5] === 0) return v4(parts[6]!, parts[7]!);
  if (parts[0] === 0x64 && parts[1] === 0xff9b && zeros(2, 6)) return v4(parts[6]!, parts[7]!);
  if (parts[0] === 0x2002) return v4(parts[1]!, parts[2]!);
  return undefined;
}
