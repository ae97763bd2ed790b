// A program's environment in a sandbox, the same for a command (commands.ts) and an interactive shell
// (interactive.ts): the variables it starts with, and its session's routes and egress made ready first. It takes
// only the parts of the emulator's state it reads (state.ts holds the whole), so the routes and the shells both
// stand on it.
import { networkModeOf, proxyEnv } from "./egress.js";
import { syncDirectRoutes } from "./egress-routes.js";
import { SANDBOX_CA_BUNDLE, SANDBOX_NODE_PREFIX, SANDBOX_USER } from "./image.js";
import type { Lifecycle } from "./lifecycle.js";
import { SANDBOX_HOME } from "./payloads.js";
import type { Registry, SessionRecord } from "./registry.js";

/** The part of the emulator's state (EmulatorState, state.ts) a program's environment is made from. */
export interface ProgramState {
  registry: Registry;
  lifecycle: Lifecycle;
  /** Directory of a Node >= 22.22.3 put first on every command's PATH. */
  nodeBinDir?: string;
}

const SYSTEM_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";

/**
 * What sudo adds for a `sudo: true` command: Vercel runs it through the image's sudo, which always names the caller
 * (the sandbox's default user) in SUDO_USER/SUDO_UID/SUDO_GID, and is configured not to reset the environment nor
 * PATH, with HOME /root (the SDK's README, "Sudo access"; docs in ../shared/reference/vercel-sandbox-api.md).
 */
const SUDO_CALLER = {
  SUDO_USER: SANDBOX_USER.name,
  SUDO_UID: String(SANDBOX_USER.uid),
  SUDO_GID: String(SANDBOX_USER.gid),
};

/**
 * A program's environment in the sandbox: the image's defaults, the proxy, the sandbox's env, then its own. Under
 * sudo the same (PATH unchanged), as root (HOME, USER, LOGNAME) and naming its caller (SUDO_*), which sudo sets
 * after the environment it keeps, so the caller's env cannot change them.
 */
export function commandEnv(
  ctx: Pick<ProgramState, "registry" | "nodeBinDir">,
  session: SessionRecord,
  own: Record<string, string>,
  sudo: boolean,
  proxy: Record<string, string>,
) {
  const sandbox = ctx.registry.sandboxes.get(session.sandboxName);
  const user = sudo ? "root" : "vercel-sandbox";
  return {
    PATH: ctx.nodeBinDir ? `${SANDBOX_NODE_PREFIX}/bin:${SYSTEM_PATH}` : SYSTEM_PATH,
    HOME: sudo ? "/root" : SANDBOX_HOME,
    USER: user,
    LOGNAME: user,
    SHELL: "/bin/bash",
    LANG: "C.UTF-8",
    VERCEL_SANDBOX: "1",
    // The image's bundle holds the host's CAs: Node then trusts a TLS-inspecting registry proxy too.
    NODE_EXTRA_CA_CERTS: SANDBOX_CA_BUNDLE,
    ...proxy,
    ...(sandbox?.env ?? {}),
    ...own,
    ...(sudo ? SUDO_CALLER : {}),
  };
}

/** Routes and egress of a running session made ready for a new program; the proxy variables it needs. */
export async function networkEnv(
  state: Pick<ProgramState, "lifecycle">,
  session: SessionRecord,
): Promise<Record<string, string>> {
  await syncDirectRoutes(session);
  await state.lifecycle.routeAccess(session);
  if (networkModeOf(session.networkPolicy) !== "proxied") return {};
  return proxyEnv((await state.lifecycle.egressOf(session)).port);
}
