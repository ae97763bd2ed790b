// Where the firewall's request rules (egress-rules.ts) are applied: for a host whose policy entry has
// rules, the egress proxy (egress-proxy.ts) hands the connection here instead of tunnelling it. A
// CONNECT tunnel that speaks TLS is terminated with a leaf for the host signed by the emulator's CA
// (egress-certs.ts; every sandbox trusts it), a plain one or an absolute-form http:// request is read
// as is; each request then goes through the rules in declaration order: answered by a `response`
// rule, sent to a `forwardURL` with Vercel's `vercel-forwarded-*` headers, or sent on to the vetted
// addresses of its destination (TLS again, verified against Node's roots plus `trust`) with a
// `transform` rule's headers set. The injected values exist only in the emulator process and on the
// outbound request: never in the sandbox, its files, its environment or its snapshots.
import type { LookupAddress } from "node:dns";
import {
  type ClientRequest,
  createServer,
  request as httpRequest,
  type IncomingMessage,
  type OutgoingHttpHeaders,
  type ServerResponse,
} from "node:http";
import { request as httpsRequest } from "node:https";
import { isIP, type Socket } from "node:net";
import type { Duplex } from "node:stream";
import { createSecureContext, rootCertificates, TLSSocket } from "node:tls";
import type { InterceptCertificates } from "./egress-certs.js";
import { claimingRule, type DirectResponse, type RequestRule, transformedHeaders } from "./egress-rules.js";

const UPSTREAM_TIMEOUT_MS = 10_000;
const HOP_HEADERS = ["proxy-connection", "proxy-authorization", "connection", "keep-alive", "upgrade", "te", "trailer"];
const TLS_HANDSHAKE = 0x16;

/** A destination the proxy has already admitted: canonical host, port and the vetted addresses. */
export interface InterceptTarget {
  host: string;
  port: number;
  addresses: LookupAddress[];
  /** The rules as they are now (read per request, so a policy update applies to the next request). */
  rules: () => RequestRule[];
}

export interface InterceptorOptions {
  certificates: InterceptCertificates;
  /** Extra CA certificates (PEM) trusted for upstream TLS besides Node's bundled roots. */
  trust?: string[];
  /** Registers a socket so the session's close ends it. */
  own: (socket: Duplex) => void;
}

export interface Interceptor {
  /** After a CONNECT to `target` was admitted: answers 200 and serves the tunnel's requests. */
  tunnel(client: Duplex, head: Buffer, target: InterceptTarget): Promise<void>;
  /** An absolute-form plain-HTTP proxy request to `target`. */
  request(req: IncomingMessage, res: ServerResponse, target: InterceptTarget): void;
  close(): void;
}

interface Context {
  target: InterceptTarget;
  scheme: "http" | "https";
}

/** `lookup` that hands back only the already-vetted addresses. */
function fixedLookup(addresses: LookupAddress[]) {
  return (_host: string, options: { all?: boolean }, callback: (...args: unknown[]) => void) => {
    if (options.all) callback(null, addresses);
    else callback(null, addresses[0]!.address, addresses[0]!.family);
  };
}

function firstChunk(client: Duplex, head: Buffer): Promise<Buffer | undefined> {
  if (head.length > 0) return Promise.resolve(head);
  return new Promise((resolve) => {
    const done = (chunk?: Buffer) => {
      client.off("data", done);
      client.off("close", done);
      client.pause();
      resolve(chunk);
    };
    client.on("data", done);
    client.once("close", done);
  });
}

export function createInterceptor(options: InterceptorOptions): Interceptor {
  const contexts = new WeakMap<object, Context>();
  const ca = [...rootCertificates, ...(options.trust ?? [])];
  const server = createServer((req, res) => {
    const context = contexts.get(req.socket);
    if (!context) return res.destroy();
    handle(req, res, context);
  });
  server.on("upgrade", (req: IncomingMessage, socket: Duplex, head: Buffer) => {
    const context = contexts.get(req.socket);
    if (!context) return socket.destroy();
    handleUpgrade(req, socket, head, context);
  });
  server.on("clientError", (_error, socket) => socket.destroy());

  function answer(res: ServerResponse, response: DirectResponse) {
    const { statusCode, headers = {}, body, contentType } = response;
    const out: OutgoingHttpHeaders = { ...headers };
    if (body !== undefined) out["content-type"] = contentType;
    res.writeHead(statusCode, out).end(body);
  }

  type Outbound = { rule: "response"; response: DirectResponse } | { rule: "send"; request: ClientRequest };

  /** Applies the first claiming rule: a direct response, or the outbound request (to the destination or the forward URL). */
  function outbound(req: IncomingMessage, { target, scheme }: Context, upgrade: boolean): Outbound {
    const url = new URL(req.url ?? "/", `${scheme}://${isIP(target.host) === 6 ? `[${target.host}]` : target.host}`);
    const rule = claimingRule(target.rules(), {
      method: req.method ?? "GET",
      path: url.pathname,
      query: url.searchParams,
      headers: req.headers,
    });
    if (rule && "response" in rule) return { rule: "response", response: rule.response };
    const headers = rule && "transform" in rule ? transformedHeaders(req.headers, rule.transform) : { ...req.headers };
    // An upgrade keeps `connection` and `upgrade`: they are what asks the destination to switch protocols.
    for (const name of HOP_HEADERS)
      if (!(upgrade && (name === "connection" || name === "upgrade"))) delete headers[name];
    const path = `${url.pathname}${url.search}`;
    let request: ClientRequest;
    if (rule && "forwardURL" in rule) {
      const forward = new URL(rule.forwardURL);
      headers["vercel-forwarded-host"] = target.host;
      headers["vercel-forwarded-scheme"] = scheme;
      headers["vercel-forwarded-port"] = String(target.port);
      headers["vercel-forwarded-path"] = path;
      headers.host = forward.host;
      const send = forward.protocol === "https:" ? httpsRequest : httpRequest;
      request = send({
        host: forward.hostname.replace(/^\[|\]$/g, ""),
        port: forward.port || (forward.protocol === "https:" ? 443 : 80),
        method: req.method,
        path: `${forward.pathname.replace(/\/+$/, "")}${path}`,
        headers,
        agent: false,
        ca,
        timeout: UPSTREAM_TIMEOUT_MS,
      });
    } else {
      const send = scheme === "https" ? httpsRequest : httpRequest;
      request = send({
        host: target.host,
        port: target.port,
        method: req.method,
        path,
        headers,
        agent: false,
        lookup: fixedLookup(target.addresses) as never,
        ...(scheme === "https" ? { ca, ...(isIP(target.host) === 0 ? { servername: target.host } : {}) } : {}),
        timeout: UPSTREAM_TIMEOUT_MS,
      });
    }
    request.once("socket", (socket: Socket) => {
      options.own(socket);
      socket.once("connect", () => socket.setTimeout(0));
    });
    request.once("timeout", () => request.destroy(new Error("upstream timed out")));
    return { rule: "send", request };
  }

  function handle(req: IncomingMessage, res: ServerResponse, context: Context) {
    const out = outbound(req, context, false);
    if (out.rule === "response") {
      req.resume();
      return answer(res, out.response);
    }
    const upstream = out.request;
    upstream.once("error", (error) => {
      if (!res.headersSent) res.writeHead(502, { "content-type": "text/plain" }).end(`${error.message}\n`);
      else res.destroy();
    });
    upstream.once("response", (reply) => {
      res.writeHead(reply.statusCode ?? 502, reply.rawHeaders);
      reply.pipe(res);
    });
    req.pipe(upstream);
  }

  /** A protocol upgrade (WebSocket) to a host with rules: the same rules, then the two sockets are joined. */
  function handleUpgrade(req: IncomingMessage, client: Duplex, head: Buffer, context: Context) {
    const out = outbound(req, context, true);
    if (out.rule === "response") return client.end(rawResponse(out.response));
    const upstream = out.request;
    upstream.once("error", (error) =>
      client.end(rawResponse({ statusCode: 502, body: `${error.message}\n`, contentType: "text/plain" })),
    );
    upstream.once("upgrade", (reply, socket, upstreamHead) => {
      options.own(socket);
      client.write(rawHead(reply.statusCode ?? 101, reply.statusMessage ?? "Switching Protocols", reply.rawHeaders));
      if (upstreamHead.length > 0) client.write(upstreamHead);
      if (head.length > 0) socket.write(head);
      socket.pipe(client);
      client.pipe(socket);
      client.once("close", () => socket.destroy());
      socket.once("close", () => client.destroy());
    });
    upstream.once("response", (reply) => {
      client.write(rawHead(reply.statusCode ?? 502, reply.statusMessage ?? "", reply.rawHeaders));
      reply.pipe(client);
    });
    upstream.end();
  }

  return {
    async tunnel(client, head, target) {
      client.write("HTTP/1.1 200 Connection Established\r\n\r\n");
      const first = await firstChunk(client, head);
      if (!first || client.destroyed) {
        client.destroy();
        return;
      }
      client.unshift(first);
      if (first[0] !== TLS_HANDSHAKE) {
        contexts.set(client, { target, scheme: "http" });
        server.emit("connection", client);
        client.resume();
        return;
      }
      let leaf: Awaited<ReturnType<InterceptCertificates["leafFor"]>>;
      try {
        leaf = await options.certificates.leafFor(target.host);
      } catch {
        client.destroy();
        return;
      }
      const tls = new TLSSocket(client as Socket, {
        isServer: true,
        secureContext: createSecureContext({ key: leaf.key, cert: leaf.cert }),
        ALPNProtocols: ["http/1.1"],
      });
      options.own(tls);
      contexts.set(tls, { target, scheme: "https" });
      server.emit("connection", tls);
    },
    request(req, res, target) {
      handle(req, res, { target, scheme: "http" });
    },
    close() {
      server.close();
    },
  };
}

/** A response head written straight to a socket (an upgrade's answer, or a refusal before one). */
function rawHead(status: number, message: string, rawHeaders: string[]): string {
  let head = `HTTP/1.1 ${status} ${message}\r\n`;
  for (let i = 0; i + 1 < rawHeaders.length; i += 2) head += `${rawHeaders[i]}: ${rawHeaders[i + 1]}\r\n`;
  return `${head}\r\n`;
}

function rawResponse({ statusCode, headers = {}, body = "", contentType }: DirectResponse): string {
  const all: string[] = [];
  for (const [name, value] of Object.entries(headers)) all.push(name, value);
  if (contentType) all.push("content-type", contentType);
  all.push("content-length", String(Buffer.byteLength(body)), "connection", "close");
  return `${rawHead(statusCode, "", all)}${body}`;
}
