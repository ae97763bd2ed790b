// The emulator's side of the holders' factory (holder-script.ts): one Python process, started on the first
// boot and again after it ends, that forks every sandbox's holder on request. Messages from the factory are
// routed to the boot they answer by id.
import type { ChildProcess } from "node:child_process";
import type { Server, Socket } from "node:net";
import type { NamespaceListener } from "./egress-listener.js";
import { HOLDER_SCRIPT } from "./holder-script.js";
import { spawnHost } from "./host-spawn.js";
import { newId } from "./ids.js";
import { PYTHON, PYTHON_FLAGS } from "./layers.js";
import { type ProgramMessage, type ProgramSpec, ProgramTable, type SandboxProgram } from "./sandbox-program.js";

/** What one holder is started with: its argv (holder-script.ts `holder`), environment and groups to join. */
export interface HolderRequest {
  args: string[];
  env: Record<string, string>;
  cgroups: readonly string[];
}

/** One holder as the factory reports it. */
export interface HolderStart {
  /** The host pid of its outer process (a process group's leader), or undefined once the factory is gone. */
  outer: Promise<number | undefined>;
  /** Its host pid (PID 1 of its namespaces), its network namespace's inode and egress listener, once its root is built. */
  ready: Promise<HolderReady>;
  /** Resolves once the outer process is gone (and with it the holder and every process of the sandbox). */
  exited: Promise<void>;
  /** True once `exited` resolved: its pids may belong to other processes by now. */
  isGone(): boolean;
  /** Starts a program in the sandbox (serve-script.ts), once `ready`; rejects if it could not start. */
  run(spec: ProgramSpec): Promise<SandboxProgram>;
}

/** A holder that built its root: its host pid, the inode of its network namespace (netns-entry.ts), its listener. */
export interface HolderReady {
  pid: number;
  netns: number;
  listener?: NamespaceListener;
}

/** An outer process waiting, in its groups and namespaces, for the sandbox it is to boot. */
export interface PreparedHolder {
  id: string;
  start: HolderStart;
}

interface Tracked {
  outer: (pid: number | undefined) => void;
  /** Whether the holder was asked to bind an egress listener (its handle may arrive after `ready`). */
  listen: boolean;
  readySeen?: boolean;
  pid?: number;
  netns?: number;
  listener?: NamespaceListener;
  ready: (value: HolderReady) => void;
  fail: (error: Error) => void;
  exited: () => void;
}

interface FactoryMessage {
  id?: string;
  run?: string;
  outer?: number;
  pid?: number;
  port?: number;
  ready?: boolean;
  netns?: number;
  error?: string;
  exit?: number;
}

export class HolderFactory {
  private child?: ChildProcess;
  private stderr = "";
  private readonly pending = new Map<string, Tracked>();
  private readonly programs = new ProgramTable();

  constructor(private readonly track: (c: ChildProcess) => void) {}

  /**
   * Starts a sandbox's holder: through `prepared` (an outer process made ahead by `prepare`, whose groups the
   * caller gave the sandbox's limits) if it is still there, otherwise from scratch.
   */
  start(request: HolderRequest, prepared?: PreparedHolder): HolderStart {
    const tracked = prepared ? this.pending.get(prepared.id) : undefined;
    if (prepared && tracked && !prepared.start.isGone()) {
      tracked.listen = request.env.LISTEN === "1";
      if (!this.send({ holder: prepared.id, boot: { args: request.args, env: request.env } })) tracked.exited();
      return prepared.start;
    }
    const id = newId("holder");
    const { start, tracked: fresh } = this.tracked(id, request.env.LISTEN === "1");
    const child = this.factory();
    child.send({ id, ...request }, (error: Error | null) => {
      if (error) fresh.exited();
    });
    return start;
  }

  /**
   * An outer process made ahead of a boot (holder-script.ts `boot_request`): it joins `cgroups`, makes the
   * namespaces and forks the holder now (a cgroup migration costs an RCU grace period, several ms; a fork a few
   * ms more), the holder does what needs no boot request, and both wait for `start`.
   */
  prepare(cgroups: readonly string[]): PreparedHolder {
    const id = newId("holder");
    const { start, tracked } = this.tracked(id, false);
    const child = this.factory();
    child.send({ id, cgroups }, (error: Error | null) => {
      if (error) tracked.exited();
    });
    return { id, start };
  }

  private tracked(id: string, listen: boolean): { start: HolderStart; tracked: Tracked } {
    let gone = false;
    let tracked!: Tracked;
    const outer = new Promise<number | undefined>((resolve) => {
      tracked = { outer: resolve, listen } as Tracked;
    });
    const ready = new Promise<HolderReady>((resolve, reject) => {
      tracked.ready = resolve;
      tracked.fail = reject;
    });
    ready.catch(() => undefined);
    const exited = new Promise<void>((resolve) => {
      tracked.exited = () => {
        gone = true;
        this.pending.delete(id);
        tracked.outer(undefined);
        tracked.fail(new Error(`sandbox namespace holder exited before it was ready`));
        tracked.listener?.server.close();
        this.programs.holderGone(id);
        resolve();
      };
    });
    this.pending.set(id, tracked);
    const run = (spec: ProgramSpec) => this.programs.open(id, spec, (message) => this.send(message));
    return { start: { outer, ready, exited, isGone: () => gone, run }, tracked };
  }

  /** Sends to the factory if it is running (false if it is gone: nothing it started is left). */
  private send(message: object): boolean {
    const child = this.child;
    if (!child?.connected) return false;
    child.send(message, (error: Error | null) => {
      if (error) this.programs.allGone();
    });
    return true;
  }

  private factory(): ChildProcess {
    if (this.child) return this.child;
    // The host's python3 by absolute path with the fixed host environment (host-spawn.ts): what the factory and its
    // holders inherit is never the emulator's environment, let alone a client's.
    const child = spawnHost(PYTHON, [...PYTHON_FLAGS, "-c", HOLDER_SCRIPT], {
      stdio: ["ignore", "ignore", "pipe", "ipc"],
      // Its own process group: a signal to the emulator's group never reaches the factory or its holders.
      detached: true,
    });
    this.child = child;
    this.track(child);
    this.stderr = "";
    child.stderr!.on("data", (d) => {
      this.stderr = (this.stderr + d).slice(-4096);
    });
    child.on("message", (message: FactoryMessage, handle?: Server) => this.receive(message, handle));
    child.on("error", () => undefined);
    child.once("exit", () => {
      if (this.child === child) this.child = undefined;
      // Every holder dies with the factory (parent-death signals): each boot waiting on it ends now.
      this.programs.allGone();
      for (const tracked of [...this.pending.values()]) {
        tracked.fail(new Error(`the holder factory exited: ${this.stderr.trim()}`));
        tracked.exited();
      }
    });
    return child;
  }

  private receive(message: FactoryMessage, handle?: Server | Socket): void {
    if (message?.run) {
      this.programs.receive(message as ProgramMessage, handle as Socket | undefined, (m) => this.send(m));
      return;
    }
    const tracked = message?.id ? this.pending.get(message.id) : undefined;
    if (!tracked) {
      (handle as Server | undefined)?.close();
      return;
    }
    if (handle) tracked.listener = { server: handle as Server, port: message.port! };
    if (message.outer !== undefined) tracked.outer(message.outer);
    if (message.pid !== undefined) tracked.pid = message.pid;
    if (message.ready) tracked.readySeen = true;
    if (message.netns !== undefined) tracked.netns = message.netns;
    // The holder's `ready` and its listener come from the holder, its `pid` from the outer process: over the one
    // channel they may arrive in any order (under many boots at once, `ready` often first), so the boot is ready
    // only once all three are in.
    if (tracked.readySeen && tracked.pid !== undefined && (tracked.listener || !tracked.listen)) {
      tracked.ready({ pid: tracked.pid, netns: tracked.netns ?? 0, listener: tracked.listener });
    }
    if (message.error !== undefined) tracked.fail(new Error(message.error));
    if (message.exit !== undefined) tracked.exited();
  }
}
