// Where a new worker (VM2) would enroll: the gateway address OpenClaw 2026.9.2 hands the node, resolved from
// the config in the order core uses (device-pair publicUrl, gateway.publicOrigin, gateway.remote.url, Tailscale,
// then the bind address), and whether a sandbox can reach it. A Vercel sandbox runs on Vercel's network: it
// reaches public addresses only. The embedded emulator runs on this machine, so any non-loopback bind works.
// Pure: reads the config object only.
import { isIP } from "node:net";

export type OriginReach = "public" | "private" | "loopback" | "unknown";

export interface EnrollmentOrigin {
  /** The URL a node would be given, when the config determines one. */
  url?: string;
  /** The config key it comes from, e.g. `gateway.publicOrigin` or `gateway.bind=loopback`. */
  source: string;
  reach: OriginReach;
  /** A config mistake that makes core ignore or refuse the setting. */
  problem?: string;
}

type Dict = Record<string, unknown>;
const dict = (value: unknown): Dict => (typeof value === "object" && value !== null ? (value as Dict) : {});
const text = (value: unknown): string | undefined =>
  typeof value === "string" && value.trim() ? value.trim() : undefined;

/** How far an address reaches: loopback/link-local/unspecified, private (RFC 1918, CGNAT, ULA), or public. */
export function reachOf(hostname: string): OriginReach {
  const host = hostname.replace(/^\[(.*)\]$/, "$1").toLowerCase();
  if (host === "localhost" || host.endsWith(".localhost")) return "loopback";
  const family = isIP(host);
  if (family === 0) return host.endsWith(".local") || host.endsWith(".ts.net") ? "private" : "public";
  if (family === 4) {
    const [a = 0, b = 0] = host.split(".").map(Number);
    if (a === 127 || a === 0 || (a === 169 && b === 254)) return "loopback";
    if (a === 10 || (a === 172 && b >= 16 && b <= 31) || (a === 192 && b === 168) || (a === 100 && b >= 64 && b <= 127))
      return "private";
    return "public";
  }
  if (host === "::1" || host === "::" || host.startsWith("fe80:") || host.startsWith("::ffff:127.")) return "loopback";
  if (/^f[cd][0-9a-f]{2}:/.test(host)) return "private";
  return "public";
}

function fromUrl(raw: string, source: string): EnrollmentOrigin {
  try {
    const url = new URL(raw.includes("://") ? raw : `https://${raw}`);
    return { url: url.origin, source, reach: reachOf(url.hostname) };
  } catch {
    return { source, reach: "unknown", problem: `${source} is not a valid URL` };
  }
}

export function enrollmentOrigin(config: unknown): EnrollmentOrigin {
  const gateway = dict(dict(config).gateway);
  const pairUrl = text(dict(dict(dict(dict(dict(config).plugins).entries)["device-pair"]).config).publicUrl);
  if (pairUrl) return fromUrl(pairUrl, "plugins.entries.device-pair.config.publicUrl");
  const publicOrigin = text(gateway.publicOrigin);
  if (publicOrigin) {
    // Core takes only a bare origin (resolveGatewayPublicOrigin) and silently ignores anything else.
    const parsed = URL.canParse(publicOrigin) ? new URL(publicOrigin) : undefined;
    if (parsed && parsed.pathname === "/" && !parsed.search && !parsed.hash) {
      return { url: parsed.origin, source: "gateway.publicOrigin", reach: reachOf(parsed.hostname) };
    }
    return {
      source: "gateway.publicOrigin",
      reach: "unknown",
      problem: "gateway.publicOrigin is not a bare origin (scheme://host[:port], no path), so core ignores it",
    };
  }
  const remote = text(dict(gateway.remote).url);
  const tailscale = text(dict(gateway.tailscale).mode) ?? "off";
  if (tailscale === "serve") return { source: "gateway.tailscale.mode=serve", reach: "private" };
  if (tailscale === "funnel") return { source: "gateway.tailscale.mode=funnel", reach: "public" };
  if (remote) return fromUrl(remote, "gateway.remote.url");
  const bind = text(gateway.bind) ?? "loopback";
  if (bind === "custom") {
    const host = text(gateway.customBindHost);
    if (!host) return { source: "gateway.bind=custom", reach: "unknown", problem: "gateway.customBindHost is not set" };
    return { source: "gateway.bind=custom", reach: reachOf(host) };
  }
  // lan and tailnet advertise this machine's private LAN or tailnet (CGNAT) address.
  if (bind === "lan" || bind === "tailnet") return { source: `gateway.bind=${bind}`, reach: "private" };
  return { source: `gateway.bind=${bind}`, reach: "loopback" };
}
