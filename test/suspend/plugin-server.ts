// The plugin's real routes and Suspender behind a loopback HTTP server, as the gateway serves them (a bearer
// check in front, a stand-in gateway behind dispatch), for specs of what a host does against them. It records
// every request path, every suspend the plugin received and its answer, and can hold a gateway method inside
// the plugin so a spec can act while the plugin is mid-call.
import http from "node:http";
import type { AddressInfo } from "node:net";
import { ROUTES, type SuspendResult } from "../../src/protocol/protocol.js";
import type { WakeSnapshot } from "../../src/protocol/wake.js";
import { IdleClock } from "../../src/suspend/clock.js";
import { createRoutes } from "../../src/suspend/routes.js";
import { type Dispatch, Suspender } from "../../src/suspend/suspender.js";
import { fakeGateway } from "./fake-gateway.js";

export interface PluginServer {
  baseUrl: string;
  clock: IdleClock;
  gateway: ReturnType<typeof fakeGateway>;
  /** The path of every request the server received, in arrival order. */
  paths: string[];
  /** Every suspend the plugin received (the requestId its route parsed) and what it answered, in order. */
  received: Array<{ requestId: string; answer?: SuspendResult }>;
  /** Holds the next call of a gateway method inside the plugin; `inside` resolves once it is there. */
  holdNext(method: string): { inside: Promise<void>; release: () => void };
  /** What status answers of the gateway's cron jobs from now on, as the plugin's wake projection would. */
  setWake(snapshot: WakeSnapshot, leadMs: number): void;
  close(): Promise<void>;
}

export async function servePlugin({ token, idleMs }: { token: string; idleMs: number }): Promise<PluginServer> {
  const clock = new IdleClock();
  const gateway = fakeGateway();
  const paths: string[] = [];
  const received: PluginServer["received"] = [];
  const held = new Map<string, { entered: () => void; release: Promise<void> }>();

  class RecordingSuspender extends Suspender {
    override async suspend(dispatch: Dispatch, requestId: string): Promise<SuspendResult> {
      const entry: { requestId: string; answer?: SuspendResult } = { requestId };
      received.push(entry);
      entry.answer = await super.suspend(dispatch, requestId);
      return entry.answer;
    }
  }
  const policy: ConstructorParameters<typeof Suspender>[0]["policy"] = { idleMs, deadlineMarginMs: 0 };
  let wake: WakeSnapshot | undefined;
  const suspender = new RecordingSuspender({
    clock,
    policy,
    providerId: "vercel-sandbox",
    instanceId: "i",
    wake: () => wake,
  });
  const dispatch: Dispatch = async (method, params) => {
    const hold = held.get(method);
    if (hold) {
      held.delete(method);
      hold.entered();
      await hold.release;
    }
    return gateway.dispatch(method, params);
  };
  const routes = createRoutes(suspender, dispatch);
  const byPath: Record<string, (typeof routes)["status"]> = {
    [ROUTES.status]: routes.status,
    [ROUTES.suspend]: routes.suspend,
    [ROUTES.resume]: routes.resume,
  };
  const server = http.createServer((req, res) => {
    paths.push(req.url ?? "");
    if (req.headers.authorization !== `Bearer ${token}`) {
      res.statusCode = 401;
      res.end(JSON.stringify({ error: { type: "unauthorized", message: "Unauthorized" } }));
      return;
    }
    void byPath[req.url ?? ""]?.(req, res);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));

  return {
    baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    clock,
    gateway,
    paths,
    received,
    setWake(snapshot, leadMs) {
      wake = snapshot;
      policy.wakeLeadMs = leadMs;
    },
    holdNext(method) {
      let entered = () => {};
      let release = () => {};
      const inside = new Promise<void>((resolve) => {
        entered = resolve;
      });
      held.set(method, { entered, release: new Promise<void>((resolve) => (release = resolve)) });
      return { inside, release };
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
