// Connections INTO a sandbox, for its exposed ports (route-server.ts). A socket stays in the network namespace
// it was created in, so a small helper started in the session's namespace (`nsenter --net` by the descriptor the
// emulator holds, netns-entry.ts; the host's own Node with the fixed host environment, like the egress listener) connects to 127.0.0.1:<port> there on request and hands the connected socket back
// over Node's IPC channel; the emulator then pipes it, and the helper has no part in the data. Servers bound
// to 127.0.0.1 or 0.0.0.0 inside the sandbox are both reached. One helper per session, started on first use;
// it exits when the channel closes (session stop, or the emulator's death) and is killed with the session.
import type { ChildProcess } from "node:child_process";
import type { Socket } from "node:net";
import { hostTool, spawnHost } from "./host-spawn.js";
import { netnsArgs } from "./netns-entry.js";
import type { SessionRecord } from "./registry.js";

const HELPER = `
require("node:fs").closeSync(Number(process.env.NETNS_FD)); // in the namespace already: the descriptor's part is over
const net = require("node:net");
process.on("message", ({ id, port }) => {
  const socket = net.connect({ host: "127.0.0.1", port });
  socket.once("connect", () => process.send({ id }, socket));
  socket.once("error", (error) => process.send({ id, error: error.code || error.message }));
});
process.once("disconnect", () => process.exit(0));
`;

interface Connector {
  child: ChildProcess;
  pending: Map<number, { resolve(socket: Socket): void; reject(error: Error): void }>;
  next: number;
}

const connectors = new WeakMap<SessionRecord, Connector>();

function start(session: SessionRecord, track: (c: ChildProcess) => void): Connector {
  // Descriptor 3 is the IPC channel; the namespace goes on 4.
  const entry = netnsArgs(session.holder!.netns, 4);
  const child = spawnHost(
    "setpriv",
    ["--pdeathsig", "KILL", "--", hostTool("nsenter"), ...entry.args, "--", process.execPath, "-e", HELPER],
    { extraEnv: { NETNS_FD: String(entry.childFd) }, stdio: ["ignore", "ignore", "ignore", "ipc", entry.fd] },
  );
  track(child);
  const connector: Connector = { child, pending: new Map(), next: 1 };
  child.on("message", (message: { id: number; error?: string }, handle) => {
    const waiter = connector.pending.get(message.id);
    connector.pending.delete(message.id);
    if (!waiter) return void (handle as Socket | undefined)?.destroy();
    if (message.error || !handle) waiter.reject(new Error(message.error ?? "no socket"));
    else waiter.resolve(handle as Socket);
  });
  const fail = () => {
    if (connectors.get(session) === connector) connectors.delete(session);
    for (const waiter of connector.pending.values()) waiter.reject(new Error("the sandbox's connector ended"));
    connector.pending.clear();
  };
  child.once("exit", fail);
  child.once("error", fail);
  connectors.set(session, connector);
  return connector;
}

/** A socket connected to 127.0.0.1:`port` inside the running session's network namespace. */
export function connectInto(session: SessionRecord, port: number, track: (c: ChildProcess) => void): Promise<Socket> {
  if (!session.holder || session.status !== "running") return Promise.reject(new Error("the session is not running"));
  const connector = connectors.get(session) ?? start(session, track);
  const id = connector.next++;
  return new Promise((resolve, reject) => {
    connector.pending.set(id, { resolve, reject });
    connector.child.send({ id, port }, (error) => {
      if (!error) return;
      connector.pending.delete(id);
      reject(error);
    });
  });
}

/** Ends the session's connector (session stop). */
export function closeConnector(session: SessionRecord): void {
  const connector = connectors.get(session);
  connectors.delete(session);
  connector?.child.kill("SIGKILL");
}
