// A host tool enters a sandbox's network namespace by the descriptor the emulator opened when the holder was
// ready, never by the holder's pid (issue 42, item 10): once the holder is gone its pid may name another process,
// in another namespace. The spec makes exactly that happen: a process in namespace X is opened, then killed, and
// its pid is handed to a new process in namespace Y (the host's ns_last_pid set just below it); the egress
// listener made afterwards must listen in X, where a client connects, and not in Y.
import { type ChildProcess, spawn } from "node:child_process";
import { readFileSync, statSync, writeFileSync } from "node:fs";
import type { Server } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { listenInNamespace } from "../../src/emulator/egress-listener.js";
import { NamespaceMismatchError, NetnsHandle, runInNetns } from "../../src/emulator/netns-entry.js";

const started: ChildProcess[] = [];
const handles: NetnsHandle[] = [];
const servers: Server[] = [];
afterEach(async () => {
  for (const server of servers.splice(0)) server.close();
  for (const handle of handles.splice(0)) handle.close();
  for (const child of started.splice(0)) await end(child);
});

/** A process in a network namespace of its own with loopback up, once it runs there. */
async function inNewNetns(): Promise<ChildProcess> {
  const child = spawn(
    "/usr/bin/unshare",
    ["-n", "/bin/sh", "-c", "/usr/sbin/ip link set lo up && exec /usr/bin/sleep 60"],
    { detached: true, stdio: "ignore", env: { PATH: "/usr/bin:/bin" } },
  );
  started.push(child);
  for (let i = 0; i < 300; i++) {
    try {
      if (readFileSync(`/proc/${child.pid}/cmdline`, "utf8").startsWith("/usr/bin/sleep")) return child;
    } catch {
      // Not there yet.
    }
    await new Promise((r) => setTimeout(r, 10));
  }
  throw new Error("unshare -n did not start");
}

/** Kills a process's group and waits until it is reaped. */
async function end(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const closed = new Promise((r) => child.once("close", r));
  try {
    process.kill(-child.pid!, "SIGKILL");
  } catch {
    // Already gone.
  }
  await closed;
}

/** Whether a client in the namespace reaches 127.0.0.1:port (python3 of the host, run there by descriptor). */
async function reaches(netns: NetnsHandle, port: number): Promise<boolean> {
  const script = `import socket\ntry:\n    socket.create_connection(("127.0.0.1", ${port}), 2).close()\n    print("yes")\nexcept OSError:\n    print("no")`;
  return (await runInNetns(netns, "python3", ["-c", script])).stdout.trim() === "yes";
}

describe("entering a sandbox's network namespace", () => {
  it("by the descriptor opened at ready: a listener lands in the holder's namespace even once its pid is another's", async () => {
    const x = await inNewNetns();
    const pid = x.pid!;
    const netns = NetnsHandle.of(pid, statSync(`/proc/${pid}/ns/net`).ino);
    handles.push(netns);
    await end(x);
    // The pid goes to a process in another namespace (other processes of the host may take it first: try again).
    let y: ChildProcess | undefined;
    for (let i = 0; i < 50 && y?.pid !== pid; i++) {
      if (y) await end(y);
      writeFileSync("/proc/sys/kernel/ns_last_pid", String(pid - 1));
      y = await inNewNetns();
    }
    expect(y!.pid).toBe(pid);
    const yNetns = NetnsHandle.of(pid, statSync(`/proc/${pid}/ns/net`).ino);
    handles.push(yNetns);

    const listener = await listenInNamespace(netns, () => {});
    servers.push(listener.server);
    expect(await reaches(netns, listener.port)).toBe(true);
    expect(await reaches(yNetns, listener.port)).toBe(false);
  });

  it("refuses a pid whose namespace is not the one the holder reported", async () => {
    const x = await inNewNetns();
    const ino = statSync(`/proc/self/ns/net`).ino;
    expect(() => NetnsHandle.of(x.pid!, ino)).toThrow(NamespaceMismatchError);
  });
});
