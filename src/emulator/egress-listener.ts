// A listening TCP socket on 127.0.0.1 INSIDE a session's network namespace, owned by the
// emulator process. A socket stays in the namespace it was created in, so a short-lived helper
// started with `nsenter --net` (network namespace only, entered by the descriptor the emulator holds, never by
// a pid: netns-entry.ts; it is the host's own Node, from the host's filesystem, with the fixed host environment:
// host-spawn.ts) binds it and hands it back over Node's IPC channel, then exits. That leaves no
// forwarder process per session and no socket file on disk for a sandbox to find: connections
// made in the sandbox to the port are accepted directly by the emulator (egress-proxy.ts).
// Note the socket keeps the namespace alive until it is closed, which session stop does.
import type { ChildProcess } from "node:child_process";
import type { Server } from "node:net";
import { spawnHost } from "./host-spawn.js";
import { type NetnsHandle, netnsArgs } from "./netns-entry.js";

const START_TIMEOUT_MS = 15_000;

// Runs in the sandbox's network namespace; the egress proxy asks for port 0 so it never collides with the
// sandbox's own servers, the route listener for 127.77.0.1:443 (an address nothing in the sandbox uses).
const HELPER = `
require("node:fs").closeSync(Number(process.env.NETNS_FD)); // in the namespace already: the descriptor's part is over
const server = require("node:net").createServer();
server.once("error", (e) => { console.error(e.message); process.exit(1); });
server.listen(Number(process.env.LISTEN_PORT), process.env.LISTEN_HOST, () => process.send({ port: server.address().port }, server));
// The helper closes the channel itself once the emulator confirms: closed from the emulator's
// side, Node never emits the child's "close", and tracked children are forgotten on "close".
process.once("message", () => process.disconnect());
process.once("disconnect", () => process.exit(0));
`;

export interface NamespaceListener {
  server: Server;
  port: number;
}

export async function listenInNamespace(
  netns: NetnsHandle,
  track: (c: ChildProcess) => void,
  at: { host: string; port: number } = { host: "127.0.0.1", port: 0 },
): Promise<NamespaceListener> {
  // Descriptor 3 is the IPC channel; the namespace goes on 4.
  const entry = netnsArgs(netns, 4);
  const child = spawnHost("nsenter", [...entry.args, "--", process.execPath, "-e", HELPER], {
    // No inherited NODE_OPTIONS or loaders: the helper is plain Node.
    extraEnv: { LISTEN_HOST: at.host, LISTEN_PORT: String(at.port), NETNS_FD: String(entry.childFd) },
    stdio: ["ignore", "ignore", "pipe", "ipc", entry.fd],
  });
  track(child);
  let stderr = "";
  child.stderr!.on("data", (d) => {
    stderr += d;
  });
  try {
    return await new Promise<NamespaceListener>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error("the egress listener did not start in time")), START_TIMEOUT_MS);
      child.once("message", (message: { port?: number }, handle) => {
        clearTimeout(timer);
        const server = handle as Server | undefined;
        if (!server || !message.port) return reject(new Error("the egress listener sent no socket"));
        child.send("received");
        resolve({ server, port: message.port });
      });
      child.on("error", (error) => {
        clearTimeout(timer);
        reject(error);
      });
      child.once("exit", (code) => {
        clearTimeout(timer);
        reject(new Error(`the egress listener exited (${code}): ${stderr.trim()}`));
      });
    });
  } catch (error) {
    child.kill("SIGKILL");
    throw error;
  } finally {
    // Its part is over either way; a helper that somehow lingers is not left behind.
    setTimeout(() => child.exitCode === null && child.signalCode === null && child.kill("SIGKILL"), 5_000).unref();
  }
}
