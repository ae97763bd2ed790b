// Exposed ports, as Vercel serves them: a port listed at create time answers at `sandbox.domain(port)`,
// `https://<sandbox>-<port>.vercel.run`, for HTTP and WebSocket alike. The emulator serves every route name
// on one TLS listener on 127.0.0.1 with a wildcard certificate from its local CA (route-ca.ts), picks the
// route by the name the client asked for (SNI), and pipes the decrypted stream to that port of the
// sandbox, connected from inside its network namespace (route-connector.ts). Unexposed ports, unknown names and stopped sandboxes get a 502; nothing else is routed.
// How names resolve: the host reaches routes through `api.fetch` (or `api.routes.dispatcher()`), other sandboxes
// through their egress proxy, which sends an allowed `*.vercel.run` name of a route here instead of to DNS.
import type { ChildProcess } from "node:child_process";
import type { Socket } from "node:net";
import { createServer, type Server, type TLSSocket } from "node:tls";
import type { Registry } from "./registry.js";
import { ensureRouteCa, ROUTE_DOMAIN, type RouteCa } from "./route-ca.js";
import { connectInto } from "./route-connector.js";

/** The route subdomain of a sandbox's port (what `routes[].subdomain` says and `domain()` builds on). */
export function routeSubdomain(sandboxName: string, port: number): string {
  return `${sandboxName}-${port}`.toLowerCase().replace(/[^a-z0-9-]/g, "-");
}

export class RouteServer {
  private listening?: Promise<{ server: Server; port: number }>;
  private issued?: Promise<RouteCa>;
  private readonly sockets = new Set<Socket>();

  constructor(
    private readonly registry: Registry,
    private readonly dataDir: string,
    private readonly track: (c: ChildProcess) => void,
  ) {}

  /** The route CA, read (or issued) once per emulator; a failed attempt is not remembered. */
  ca(): Promise<RouteCa> {
    if (!this.issued) {
      const issuing = ensureRouteCa(this.dataDir);
      this.issued = issuing;
      issuing.catch(() => {
        if (this.issued === issuing) this.issued = undefined;
      });
    }
    return this.issued;
  }

  /** The sandbox and port a route name stands for, if it is one of ours. */
  private resolve(hostname: string): { sandboxName: string; port: number } | undefined {
    const name = hostname.toLowerCase().replace(/\.$/, "");
    if (!name.endsWith(`.${ROUTE_DOMAIN}`)) return undefined;
    const sub = name.slice(0, -ROUTE_DOMAIN.length - 1);
    for (const sandbox of this.registry.sandboxes.values()) {
      for (const port of sandbox.ports)
        if (routeSubdomain(sandbox.name, port) === sub) return { sandboxName: sandbox.name, port };
    }
    return undefined;
  }

  /** The route server's loopback port (it starts on first use). */
  async listenPort(): Promise<number> {
    return (await this.start()).port;
  }

  /** The loopback port serving `hostname`, when it names a route of this emulator (the server starts on first use). */
  async portFor(hostname: string): Promise<number | undefined> {
    if (!this.resolve(hostname)) return undefined;
    return (await this.start()).port;
  }

  /**
   * A handler for raw connections accepted elsewhere (a sandbox's in-namespace route listener, route-access.ts),
   * with one TLS server for all of them; a route is taken only when `allowed` admits the name the client asked for.
   */
  async acceptor(allowed: (name: string) => boolean): Promise<(socket: Socket) => void> {
    const { key, cert } = await this.ca();
    const server = createServer({ key, cert }, (client) => {
      if (allowed(client.servername || "")) void this.route(client);
      else forbidden(client);
    });
    server.on("tlsClientError", () => {});
    return (socket) => {
      this.own(socket);
      server.emit("connection", socket);
    };
  }

  private start(): Promise<{ server: Server; port: number }> {
    this.listening ??= (async () => {
      const { key, cert } = await this.ca();
      const server = createServer({ key, cert }, (socket) => void this.route(socket));
      server.on("tlsClientError", () => {});
      await new Promise<void>((resolve, reject) => {
        server.once("error", reject);
        server.listen(0, "127.0.0.1", () => resolve());
      });
      return { server, port: (server.address() as { port: number }).port };
    })();
    this.listening.catch(() => {
      this.listening = undefined;
    });
    return this.listening;
  }

  private async route(client: TLSSocket): Promise<void> {
    this.own(client);
    const target = this.resolve(client.servername || "");
    const sandbox = target && this.registry.sandboxes.get(target.sandboxName);
    const session = sandbox && this.registry.sessions.get(sandbox.currentSessionId);
    if (!target || session?.status !== "running") return badGateway(client, "no running sandbox serves this route");
    let upstream: Socket;
    try {
      upstream = await connectInto(session, target.port, this.track);
    } catch {
      return badGateway(client, "nothing listens on this port in the sandbox");
    }
    this.own(upstream);
    if (client.destroyed) return void upstream.destroy();
    upstream.pipe(client);
    client.pipe(upstream);
    client.once("close", () => upstream.destroy());
    upstream.once("close", () => client.destroy());
  }

  private own(socket: Socket): void {
    this.sockets.add(socket);
    socket.once("close", () => this.sockets.delete(socket));
    socket.on("error", () => socket.destroy());
  }

  async close(): Promise<void> {
    const listening = await this.listening?.catch(() => undefined);
    listening?.server.close();
    for (const socket of this.sockets) socket.destroy();
  }
}

function answer(socket: Socket, status: string, reason: string): void {
  const body = `${reason}\n`;
  socket.end(
    `HTTP/1.1 ${status}\r\ncontent-type: text/plain\r\ncontent-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n${body}`,
  );
}

function badGateway(socket: Socket, reason: string): void {
  answer(socket, "502 Bad Gateway", reason);
}

function forbidden(socket: Socket): void {
  answer(socket, "403 Forbidden", "this route is not allowed by the sandbox network policy");
}
