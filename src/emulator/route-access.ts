// Routes from inside a sandbox without proxy support (the OpenClaw node's WebSocket reaching a gateway at
// `sandbox.domain(port)` is the case that matters): every route name is written to the sandbox's /etc/hosts
// as 127.77.0.1, where the emulator listens inside the sandbox's network namespace on port 443 (a socket
// made there by the egress-listener helper). A connection there is served by the route server like any other,
// after the name the client asked for (SNI) is checked against THIS sandbox's egress policy: a name the policy
// does not allow gets a 403 and never reaches the other sandbox. The hosts entries are refreshed at boot and
// before each command, so routes of sandboxes created later resolve too.
import type { ChildProcess } from "node:child_process";
import type { Server } from "node:net";
import { listenInNamespace } from "./egress-listener.js";
import { egressRules, hostAllowed } from "./egress-policy.js";
import type { Registry, SessionRecord } from "./registry.js";
import { ROUTE_DOMAIN } from "./route-ca.js";
import { type RouteServer, routeSubdomain } from "./route-server.js";
import { runToEnd } from "./sandbox-program.js";

export const ROUTE_ADDRESS = "127.77.0.1";
const BASE_HOSTS = "127.0.0.1 localhost\n::1 localhost ip6-localhost\n";

interface Access {
  listener?: Promise<Server>;
  hosts?: string;
}

const access = new WeakMap<SessionRecord, Access>();

function stateOf(session: SessionRecord): Access {
  let state = access.get(session);
  if (!state) {
    // A fresh session has the image's hosts file (or its snapshot's, whose stale route lines are harmless).
    state = { hosts: BASE_HOSTS };
    access.set(session, state);
  }
  return state;
}

function hostsFile(registry: Registry): string {
  const names = [...registry.sandboxes.values()].flatMap((sandbox) =>
    sandbox.ports.map((port) => `${ROUTE_ADDRESS} ${routeSubdomain(sandbox.name, port)}.${ROUTE_DOMAIN}`),
  );
  if (names.length === 0) return BASE_HOSTS;
  return `${BASE_HOSTS}# routes of the emulator's sandboxes (sandbox.domain(port))\n${names.join("\n")}\n`;
}

async function writeHosts(session: SessionRecord, text: string): Promise<void> {
  const { code } = await runToEnd(
    session.holder!.start.run,
    {
      argv: ["/bin/sh", "-c", "cat > /etc/hosts"],
      env: { PATH: "/usr/sbin:/usr/bin:/sbin:/bin" },
      cwd: "/",
      user: "root",
    },
    text,
  );
  if (code !== 0) throw new Error(`could not write the sandbox's /etc/hosts (${code})`);
}

/** Makes the current routes resolvable and reachable from inside the session; cheap when nothing changed. */
export async function syncRouteAccess(
  session: SessionRecord,
  registry: Registry,
  routes: RouteServer,
  track: (c: ChildProcess) => void,
): Promise<void> {
  if (!session.holder || session.status !== "running") return;
  const state = stateOf(session);
  const text = hostsFile(registry);
  if (state.hosts !== text) {
    await writeHosts(session, text);
    state.hosts = text;
  }
  if (
    !state.listener &&
    registry.sandboxes.size > 0 &&
    [...registry.sandboxes.values()].some((s) => s.ports.length > 0)
  ) {
    const allowed = (name: string) => {
      const rules = egressRules(session.networkPolicy);
      return !rules.nothing && (rules.everything || hostAllowed(rules, name));
    };
    // The acceptor first: a listener made before a failing acceptor would be left open in the namespace.
    const listening = routes.acceptor(allowed).then(async (accept) => {
      const { server } = await listenInNamespace(session.holder!.netns, track, { host: ROUTE_ADDRESS, port: 443 });
      server.on("connection", accept);
      server.on("error", () => {});
      return server;
    });
    state.listener = listening;
    listening.catch(() => {
      if (state.listener === listening) state.listener = undefined;
    });
    await listening;
  }
}

/** Closes the session's in-sandbox route listener (session stop). */
export async function closeRouteAccess(session: SessionRecord): Promise<void> {
  const state = access.get(session);
  access.delete(session);
  (await state?.listener?.catch(() => undefined))?.close();
}
