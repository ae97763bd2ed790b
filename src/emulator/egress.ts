// How a command's network is set up from the session's policy (see isolation.ts): every command joins
// the session's network namespace (only `lo`); under `deny-all` that is all, under any other policy
// (`allow-all` included, so the host's own services stay out of reach) the session's egress proxy is
// its one way out, announced in the usual proxy variables. The proxy starts with the first command that needs it and ends
// with the session.
import type { ChildProcess } from "node:child_process";
import { listenInNamespace, type NamespaceListener } from "./egress-listener.js";
import { type EgressProxy, type InterceptOptions, type RouteOf, serveEgressProxy } from "./egress-proxy.js";
import type { NetnsHandle } from "./netns-entry.js";

export type NetworkMode = "isolated" | "proxied";

export function networkModeOf(policy: Record<string, unknown>): NetworkMode {
  return policy.mode === "deny-all" ? "isolated" : "proxied";
}

export interface SessionEgress extends EgressProxy {
  port: number;
}

/** What the proxy needs of a session (a registry SessionRecord is one; named here so egress does not import it). */
export interface EgressSession {
  holder?: { netns: NetnsHandle };
  networkPolicy: Record<string, unknown>;
  egress?: Promise<SessionEgress>;
}

/**
 * The session's proxy, started on first use; the caller must hold a running session. Its listener is the one
 * the holder bound at boot (`bound`, isolation.ts) or, without one, a socket a helper binds in the namespace.
 */
export function sessionEgress(
  session: EgressSession,
  track: (c: ChildProcess) => void,
  routeOf?: RouteOf,
  intercept?: InterceptOptions,
  bound?: NamespaceListener,
): Promise<SessionEgress> {
  if (session.egress) return session.egress;
  const starting = (async () => {
    const { server, port } = bound ?? (await listenInNamespace(session.holder!.netns, track));
    // Reads the record on every connection, so policy updates apply to the next connection.
    const proxy = serveEgressProxy(server, () => session.networkPolicy, { routeOf, intercept });
    return { port, close: () => proxy.close() };
  })();
  session.egress = starting;
  // A failed start is not remembered: the next command tries again.
  starting.catch(() => {
    if (session.egress === starting) session.egress = undefined;
  });
  return starting;
}

/** Ends the proxy and every connection through it (after the holder is gone). */
export async function closeSessionEgress(session: EgressSession): Promise<void> {
  const egress = session.egress;
  session.egress = undefined;
  (await egress?.catch(() => undefined))?.close();
}

/** Proxy variables for curl, wget, npm, pip, git… and Node's own fetch/http (NODE_USE_ENV_PROXY). */
export function proxyEnv(port: number): Record<string, string> {
  const url = `http://127.0.0.1:${port}`;
  const local = "localhost,127.0.0.1,::1";
  return {
    HTTP_PROXY: url,
    HTTPS_PROXY: url,
    http_proxy: url,
    https_proxy: url,
    NO_PROXY: local,
    no_proxy: local,
    NODE_USE_ENV_PROXY: "1",
  };
}
