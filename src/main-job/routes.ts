// How this machine resolves `*.vercel.run` while the job runs on the emulator: on Vercel, the host reaches VM1's
// exposed port by DNS; here every such name connects to the emulator's route server (with the name as SNI and
// the route CA as trust anchor), and every other name connects as usual. Installed as the process's global
// dispatcher for the job's duration, so the reference host's client and fetch need no special wiring.
import { Agent, buildConnector, type Dispatcher, getGlobalDispatcher, setGlobalDispatcher } from "undici";

const ROUTE_NAME = /\.vercel\.run\.?$/i;

export interface RouteAccess {
  ca(): Promise<string>;
  address(): Promise<{ host: string; port: number }>;
}

/** Installs the route-aware dispatcher; returns a function that restores the previous one. */
export async function resolveRoutesLocally(routes: RouteAccess): Promise<() => Promise<void>> {
  const [ca, address] = await Promise.all([routes.ca(), routes.address()]);
  const toRoute = buildConnector({ ca });
  const direct = buildConnector({});
  const agent = new Agent({
    connect: (options, callback) =>
      ROUTE_NAME.test(options.hostname)
        ? toRoute(
            { ...options, hostname: address.host, port: String(address.port), servername: options.hostname },
            callback,
          )
        : direct(options, callback),
  });
  const previous: Dispatcher = getGlobalDispatcher();
  setGlobalDispatcher(agent);
  return async () => {
    setGlobalDispatcher(previous);
    await agent.close();
  };
}
