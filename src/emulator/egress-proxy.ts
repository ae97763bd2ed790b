// The one way out of a session under a custom policy: an HTTP proxy served by the emulator
// process itself, on a listening socket that lives in the session's network namespace (see
// egress-listener.ts). It takes `CONNECT host:port` (TLS and other tunnels) and absolute-form
// plain-HTTP requests, reads the session's CURRENT policy for every new connection (so a policy
// update applies at once; open tunnels are left alone), resolves names with the host resolver
// and connects only to addresses the policy admits (egress-policy.ts); anything else is a 403
// and no connection is made. Outbound sockets are opened from the host network namespace, which is why
// the host's own addresses are refused unless the policy names them (egress-policy.ts). The host asked
// for (the request URI's or the CONNECT target's; a Host header never chooses where a request goes) is
// read to its canonical spelling first (ip-literal.ts), names are resolved once, and the connection
// goes to exactly the canonical addresses that were checked: no other spelling and no second lookup.

import type { LookupAddress } from "node:dns";
import { lookup as dnsLookup } from "node:dns/promises";
import { createServer, type IncomingMessage, request, type ServerResponse } from "node:http";
import { type Server, type Socket, connect as tcpConnect } from "node:net";
import type { Duplex } from "node:stream";
import { HostSpellingError, hostAddresses, type ParsedHost, parseHost } from "../infra/index.js";
import type { InterceptCertificates } from "./egress-certs.js";
import { createInterceptor, type InterceptTarget } from "./egress-intercept.js";
import { allowedAddresses, egressRules, hostAllowed, worthResolving } from "./egress-policy.js";
import { rulesFor } from "./egress-rules.js";

const CONNECT_TIMEOUT_MS = 10_000;
const LOOKUP_TIMEOUT_MS = 10_000;
/** Per session: a runaway client in the sandbox cannot exhaust the emulator's descriptors. */
export const MAX_PROXY_CONNECTIONS = 256;
const HOP_HEADERS = ["proxy-connection", "proxy-authorization", "connection", "keep-alive"];

export interface EgressProxy {
  close(): void;
}

/** The loopback port of the emulator's route server when `host` is one of its `*.vercel.run` routes. */
export type RouteOf = (host: string) => Promise<number | undefined>;

/** The resolver: the host's (getaddrinfo) unless a test gives its own. */
export type Lookup = (host: string) => Promise<LookupAddress[]>;

/** What the proxy needs to apply request rules (egress-intercept.ts); without it, rules are refused at connect. */
export interface InterceptOptions {
  certificates: InterceptCertificates;
  /** Extra CA certificates (PEM) trusted for upstream TLS besides Node's bundled roots. */
  trust?: string[];
}

export interface EgressProxyOptions {
  routeOf?: RouteOf;
  lookup?: Lookup;
  intercept?: InterceptOptions;
}

/**
 * `host` is canonical (a name, or the address to connect to); `port` is set for a route: the tunnel goes to
 * the route server, whatever port the client asked for.
 */
type Decision =
  | { host: string; addresses: LookupAddress[]; port?: number }
  | { refused: string; status: "400 Bad Request" | "403 Forbidden" };

async function resolve(lookup: Lookup, host: ParsedHost): Promise<LookupAddress[]> {
  if (host.kind === "address") return [{ address: host.address, family: host.family }];
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`looking up ${host.name} timed out`)), LOOKUP_TIMEOUT_MS);
  });
  try {
    return await Promise.race([lookup(host.name), timeout]);
  } finally {
    clearTimeout(timer);
  }
}

/** `lookup` for net/http that hands back only the already-vetted addresses (never a second DNS answer). */
function fixedLookup(addresses: LookupAddress[]) {
  return (_host: string, options: { all?: boolean }, callback: (...args: unknown[]) => void) => {
    if (options.all) callback(null, addresses);
    else callback(null, addresses[0]!.address, addresses[0]!.family);
  };
}

/** `host:port` as CONNECT gives it; the host still in the client's spelling. */
function parseAuthority(authority: string): { host: string; port: number } | undefined {
  const match = /^(\[[^\]]+\]|[^:[\]]+):(\d{1,5})$/.exec(authority);
  const port = Number(match?.[2]);
  if (!match || port < 1 || port > 65535) return undefined;
  return { host: match[1]!, port };
}

function refuse(socket: Duplex, status: string, reason: string): void {
  const body = `${reason}\n`;
  socket.end(
    `HTTP/1.1 ${status}\r\ncontent-type: text/plain\r\ncontent-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n${body}`,
  );
}

/** Serves the proxy on `listener`; `policyOf` returns the session's policy as it is right now. */
export function serveEgressProxy(
  listener: Server,
  policyOf: () => Record<string, unknown>,
  { routeOf, lookup = (host) => dnsLookup(host, { all: true }), intercept }: EgressProxyOptions = {},
): EgressProxy {
  const sockets = new Set<Duplex>();
  const own = (socket: Duplex) => {
    sockets.add(socket);
    socket.once("close", () => sockets.delete(socket));
    socket.on("error", () => socket.destroy());
  };
  const interceptor = intercept && createInterceptor({ ...intercept, own });

  /** The destination as the interceptor needs it when the host's policy entry has request rules, else undefined. */
  function ruled(host: string, port: number, addresses: LookupAddress[]): InterceptTarget | undefined {
    if (rulesFor(policyOf(), host).length === 0) return undefined;
    return { host, port, addresses, rules: () => rulesFor(policyOf(), host) };
  }

  /** `spelled`: the host as the client wrote it. */
  async function decide(spelled: string): Promise<Decision> {
    let target: ParsedHost;
    try {
      target = parseHost(spelled);
    } catch (error) {
      if (!(error instanceof HostSpellingError)) throw error;
      return { refused: error.message, status: "400 Bad Request" };
    }
    const host = target.kind === "name" ? target.name : target.address;
    const notAllowed = {
      refused: `${host} is not allowed by the sandbox network policy`,
      status: "403 Forbidden",
    } as const;
    const rules = egressRules(policyOf());
    // An exposed port of a sandbox (`sandbox.domain(port)`): allowed by name like any host, served locally.
    const routePort = routeOf && host.endsWith(".vercel.run") ? await routeOf(host) : undefined;
    if (routePort !== undefined) {
      if (rules.nothing || !(rules.everything || hostAllowed(rules, host))) return notAllowed;
      return { host: "127.0.0.1", addresses: [{ address: "127.0.0.1", family: 4 }], port: routePort };
    }
    if (!worthResolving(rules, host)) return notAllowed;
    let addresses: LookupAddress[];
    try {
      addresses = allowedAddresses(rules, host, await resolve(lookup, target), await hostAddresses());
    } catch (error) {
      return { refused: `${host} could not be resolved: ${(error as Error).message}`, status: "403 Forbidden" };
    }
    return addresses.length > 0 ? { host, addresses } : notAllowed;
  }

  async function tunnel(req: IncomingMessage, client: Duplex, head: Buffer) {
    const target = parseAuthority(req.url ?? "");
    if (!target) return refuse(client, "400 Bad Request", "CONNECT needs host:port");
    const decision = await decide(target.host);
    if ("refused" in decision) return refuse(client, decision.status, decision.refused);
    if (client.destroyed) return;
    if (decision.port !== undefined && target.port !== 443) {
      return refuse(client, "403 Forbidden", `${target.host} is served on port 443 only`);
    }
    const withRules = decision.port === undefined ? ruled(decision.host, target.port, decision.addresses) : undefined;
    if (withRules) {
      if (!interceptor)
        return refuse(client, "403 Forbidden", `${decision.host} has request rules this proxy cannot apply`);
      return interceptor.tunnel(client, head, withRules);
    }
    const upstream: Socket = tcpConnect({
      host: decision.host,
      port: decision.port ?? target.port,
      lookup: fixedLookup(decision.addresses) as never,
    });
    own(upstream);
    let connected = false;
    upstream.setTimeout(CONNECT_TIMEOUT_MS, () => upstream.destroy(new Error("connect timed out")));
    upstream.once("error", (error) => {
      if (!connected) refuse(client, "502 Bad Gateway", error.message);
      else client.destroy();
    });
    upstream.once("connect", () => {
      connected = true;
      upstream.setTimeout(0);
      client.write("HTTP/1.1 200 Connection Established\r\n\r\n");
      if (head.length > 0) upstream.write(head);
      upstream.pipe(client);
      client.pipe(upstream);
    });
    client.once("close", () => upstream.destroy());
    // Before the connect, the client is being told why (502) and ends once that is written.
    upstream.once("close", () => connected && client.destroy());
  }

  async function forward(req: IncomingMessage, res: ServerResponse) {
    let url: URL;
    try {
      url = new URL(req.url ?? "");
    } catch {
      return res.writeHead(400).end("this proxy takes absolute-form http:// requests and CONNECT\n");
    }
    if (url.protocol !== "http:") return res.writeHead(400).end("only http:// is proxied in the clear; use CONNECT\n");
    // WHATWG URL has already read IPv4 number forms; decide() reads the rest (IPv6 spellings, mapped forms).
    const decision = await decide(url.hostname);
    if ("refused" in decision) {
      return res
        .writeHead(Number.parseInt(decision.status, 10), { "content-type": "text/plain" })
        .end(`${decision.refused}\n`);
    }
    if (decision.port !== undefined) return res.writeHead(400).end("routes answer https only; use CONNECT\n");
    const withRules = ruled(decision.host, Number(url.port) || 80, decision.addresses);
    if (withRules) {
      if (!interceptor) return res.writeHead(403).end(`${decision.host} has request rules this proxy cannot apply\n`);
      return interceptor.request(req, res, withRules);
    }
    const headers = { ...req.headers };
    for (const name of HOP_HEADERS) delete headers[name];
    const upstream = request({
      host: decision.host,
      port: url.port || 80,
      method: req.method,
      path: `${url.pathname}${url.search}`,
      headers,
      agent: false,
      lookup: fixedLookup(decision.addresses) as never,
      timeout: CONNECT_TIMEOUT_MS,
    });
    upstream.once("socket", (socket) => {
      own(socket);
      socket.once("connect", () => socket.setTimeout(0));
    });
    upstream.once("timeout", () => upstream.destroy(new Error("connect timed out")));
    upstream.once("error", (error) => {
      if (!res.headersSent) res.writeHead(502, { "content-type": "text/plain" }).end(`${error.message}\n`);
      else res.destroy();
    });
    upstream.once("response", (answer) => {
      res.writeHead(answer.statusCode ?? 502, answer.rawHeaders);
      answer.pipe(res);
    });
    req.pipe(upstream);
  }

  const http = createServer((req, res) => void forward(req, res));
  http.on("connect", (req, socket, head) => void tunnel(req, socket, head));
  http.on("clientError", (_error, socket) => socket.destroy());
  listener.maxConnections = MAX_PROXY_CONNECTIONS;
  listener.on("connection", (socket: Socket) => {
    own(socket);
    http.emit("connection", socket);
  });
  listener.on("error", () => {});
  return {
    close() {
      listener.close();
      http.close();
      interceptor?.close();
      for (const socket of sockets) socket.destroy();
    },
  };
}
