// How the host reaches the emulator's routes: an undici dispatcher that connects every `*.vercel.run` name
// to the route server on loopback, with the name as SNI (the route server picks the sandbox by it) and the
// emulator's CA as the only trust anchor. `api.fetch` uses it for route URLs, so `sandbox.domain(port)`
// answers from the host as it would on Vercel.
import { Agent, buildConnector, type Dispatcher } from "undici";
import type { RouteServer } from "./route-server.js";

export class RouteClient {
  private agent?: Promise<Agent>;

  constructor(private readonly routes: RouteServer) {}

  /** A dispatcher for `https://<route>.vercel.run` URLs (undici fetch, WebSocket, request). */
  dispatcher(): Promise<Dispatcher> {
    this.agent ??= (async () => {
      const { ca } = await this.routes.ca();
      const port = await this.routes.listenPort();
      const connector = buildConnector({ ca });
      return new Agent({
        connect: (options, callback) =>
          connector({ ...options, hostname: "127.0.0.1", port: String(port), servername: options.hostname }, callback),
      });
    })();
    this.agent.catch(() => {
      this.agent = undefined;
    });
    return this.agent;
  }

  async close(): Promise<void> {
    await (await this.agent?.catch(() => undefined))?.close();
  }
}
