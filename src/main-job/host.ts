// The host, as seed 000 places it in front of VM1 (a Vercel Function there; an HTTP server on the job's host
// address here): the reference host (src/reference-host) verifies the idle clock's signed notification,
// suspends the gateway and sleeps VM1, wakes VM1 when a message comes while it sleeps, and keeps the gateway's wake
// snapshots and wakes VM1 before a cron job is due (its wake timer). On top of it, this module hands a
// message to the gateway: it places the conversation's session on the `vercel-sandbox` profile once (as the
// Control UI does before a first cloud turn), then sends the message through the gateway's OpenAI-compatible
// endpoint on VM1's exposed port and returns the reply.
import { randomBytes } from "node:crypto";
import type http from "node:http";
import type { AddressInfo } from "node:net";
import { Sandbox } from "@vercel/sandbox";
import { type KeptWake, notificationKind, type VmConnection, type WakeOptions } from "../host/index.js";
import { createHost, serve, type WakeEvent } from "../reference-host/index.js";
import { pollUntil } from "./poll.js";
import { HOST_WAKE_AHEAD_MS, jsonOf, SUSPEND_DEADLINE_MS } from "./scheduled.js";
import { SESSION_KEY } from "./topology.js";
import { type GatewaySecrets, gatewayStart, openclaw, PROFILE_ID, SAMPLE_REPO } from "./vm1.js";

export interface HostOptions {
  address: string;
  connection: VmConnection;
  vmName: string;
  port: number;
  publicOrigin: string;
  secrets: GatewaySecrets;
  /** VM1's network policy, set again at every wake (the firewall rule that adds the model's key). */
  networkPolicy: WakeOptions["networkPolicy"];
  /** Shell run before the gateway at every start (Codex mode: its approvals client). */
  prelude?: string;
  /**
   * How a message reaches the agent: the gateway's OpenAI-compatible endpoint (default), or `chat.send` and the
   * transcript, as the Control UI does (Codex mode: the compatible endpoint answered 500 for its session on 2026.9.4).
   */
  via?: "chat-completions" | "chat-send";
}

export interface Reply {
  text: string;
  woke: boolean;
  /** From the message's arrival to the reply. */
  ms: number;
  /** Of which waking VM1, and placing the session on VM2 (its allocation, preparation and enrollment). */
  wakeMs: number;
  placeMs: number;
}

/** One sleep the reference host attempted: when the notification that started it came, how and when it ended. */
export interface SleepAttempt {
  /** `{ slept: true, … }`, or why not (the suspend route answered busy past its deadline, or an error's name). */
  outcome: unknown;
  notifiedAtMs: number;
  endedAtMs: number;
}

export class JobHost {
  /** Every sleep attempt, in order: a refused one is followed by another when the plugin notifies again. */
  readonly sleeps: SleepAttempt[] = [];
  /** The reference host's scheduled-wake events, in order. */
  readonly wakes: WakeEvent[] = [];
  private server?: http.Server;
  private stopHost?: () => void;
  private kept?: () => Promise<KeptWake | undefined>;
  private url = "";
  private placed = false;
  /** Messages being handled: a notification then is refused (409), and the resident notifies again later. */
  private inFlight = 0;
  /** A sleep the reference host accepted and has not finished: a message waits for it, then wakes VM1. */
  private sleeping: Promise<void> = Promise.resolve();
  /** Authenticates this job's own calls to /message (the host binds beyond loopback, so it requires one). */
  private readonly messageSecret = randomBytes(24).toString("hex");
  /** Arrival times of accepted sleep notifications whose sleep has not ended (the reference host runs them in turn). */
  private readonly notified: number[] = [];

  constructor(private readonly options: HostOptions) {}

  get notifyUrl(): string {
    return `${this.url}/notify`;
  }

  async start(): Promise<void> {
    const { options } = this;
    const host = createHost({
      gatewayUrl: options.publicOrigin,
      gatewayToken: options.secrets.gatewayToken,
      notifySecret: options.secrets.notifySecret,
      messageSecret: this.messageSecret,
      connection: options.connection,
      vmName: options.vmName,
      start: gatewayStart(options.port, options.secrets, options.prelude),
      networkPolicy: options.networkPolicy,
      ready: () => this.ready(),
      onSlept: (outcome) => {
        const endedAtMs = Date.now();
        this.sleeps.push({ outcome, notifiedAtMs: this.notified.shift() ?? endedAtMs, endedAtMs });
      },
      wakeAheadMs: HOST_WAKE_AHEAD_MS,
      suspendDeadlineMs: SUSPEND_DEADLINE_MS,
      onWake: (event) => this.wakes.push(event),
      // The sleep the host accepted runs after its 202; the next message waits for it (it settles after onSlept).
      waitUntil: (work) => {
        this.sleeping = work.then(() => undefined);
      },
    });
    this.stopHost = host.stop;
    this.kept = host.keptWake;
    this.server = await serve(
      { fetch: (request) => this.handle(host, request), authenticatesMessages: host.authenticatesMessages },
      0,
      options.address,
    );
    this.url = `http://${options.address}:${(this.server.address() as AddressInfo).port}`;
  }

  /**
   * The seed's admission rule, kept by the host: the idle clock knows nothing of a message the host is still
   * placing (a cold dispatch takes minutes), so a sleep notification that arrives meanwhile is refused. Wake
   * snapshots always pass: they ask for no sleep.
   */
  private async handle(reference: { fetch(request: Request): Promise<Response> }, request: Request) {
    if (new URL(request.url).pathname !== "/notify") return reference.fetch(request);
    const kind = notificationKind(await request.clone().text());
    if (kind === "wake") return reference.fetch(request);
    if (this.inFlight > 0) {
      return new Response(JSON.stringify({ error: "a message is being handled; notify again later" }), {
        status: 409,
        headers: { "content-type": "application/json" },
      });
    }
    // Counted before the reference host starts the sleep (it does so before it answers), dropped if it refused.
    this.notified.push(Date.now());
    const response = await reference.fetch(request);
    if (response.status !== 202) this.notified.pop();
    return response;
  }

  /** The wake snapshot the reference host keeps: every job the gateway asked it to wake VM1 for. */
  async keptWake(): Promise<KeptWake | undefined> {
    return this.kept?.();
  }

  /** The sleeps that put VM1 to sleep, in order (refused attempts left out). */
  slept(): SleepAttempt[] {
    return this.sleeps.filter((s) => (s.outcome as { slept?: unknown }).slept === true);
  }

  async ready(): Promise<boolean> {
    const response = await fetch(`${this.options.publicOrigin}/readyz`).catch(() => undefined);
    return response?.ok === true;
  }

  vm1(): Promise<Sandbox> {
    return Sandbox.get({ ...this.options.connection, name: this.options.vmName });
  }

  /** A message arrives: wake VM1 if it sleeps, place the session once, hand the message over, return the reply. */
  async message(text: string): Promise<Reply> {
    const started = performance.now();
    this.inFlight++;
    try {
      await this.sleeping;
      const since = (mark: number) => Math.round(performance.now() - mark);
      const woke = (await this.vm1()).status !== "running";
      if (woke) {
        const response = await fetch(`${this.url}/message`, {
          method: "POST",
          headers: { authorization: `Bearer ${this.messageSecret}` },
          body: "{}",
        });
        if (!response.ok) throw new Error(`the host could not wake VM1: ${response.status} ${await response.text()}`);
      }
      const wakeMs = woke ? since(started) : 0;
      let placeMs = 0;
      if (!this.placed) {
        const placing = performance.now();
        await this.placeSession();
        placeMs = since(placing);
      }
      const reply = await this.chat(text);
      return { text: reply, woke, ms: since(started), wakeMs, placeMs };
    } finally {
      this.inFlight--;
    }
  }

  /** A gateway call through the CLI on VM1 (the token in its environment); its JSON answer. */
  private async call<T>(method: string, params: unknown, timeoutMs: number): Promise<T | undefined> {
    const out = await openclaw(
      await this.vm1(),
      method,
      ["gateway", "call", method, "--params", JSON.stringify(params), "--json", "--timeout", String(timeoutMs)],
      { OPENCLAW_GATEWAY_TOKEN: this.options.secrets.gatewayToken },
    );
    return jsonOf<T>(out);
  }

  /** Creates the conversation's session on a worktree of the sample repository and dispatches it to VM2's profile. */
  private async placeSession(): Promise<void> {
    await this.call(
      "sessions.create",
      { key: SESSION_KEY, worktree: true, cwd: SAMPLE_REPO, worktreeName: "main-job" },
      120_000,
    );
    await this.call("sessions.dispatch", { key: SESSION_KEY, profileId: PROFILE_ID }, 1_500_000);
    this.placed = true;
  }

  private chat(text: string): Promise<string> {
    return this.options.via === "chat-send" ? this.chatSend(text) : this.chatCompletions(text);
  }

  /** `chat.send`, then waits for that run to end and answers the transcript's last assistant text. */
  private async chatSend(text: string): Promise<string> {
    const runId = `main-job-${randomBytes(8).toString("hex")}`;
    await this.call("chat.send", { sessionKey: SESSION_KEY, message: text, idempotencyKey: runId }, 120_000);
    await pollUntil(
      "the agent's turn to end",
      async () => {
        const described = await this.call<{ session?: { status?: string; lastRunId?: string } }>(
          "sessions.describe",
          { key: SESSION_KEY },
          60_000,
        );
        const session = described?.session;
        return session?.lastRunId === runId && session.status !== "running" ? true : undefined;
      },
      900_000,
    );
    const history = await this.call<{ messages?: unknown[] }>("chat.history", { sessionKey: SESSION_KEY }, 60_000);
    return lastAssistantText(history?.messages ?? []);
  }

  private async chatCompletions(text: string): Promise<string> {
    const response = await fetch(`${this.options.publicOrigin}/v1/chat/completions`, {
      method: "POST",
      headers: {
        authorization: `Bearer ${this.options.secrets.gatewayToken}`,
        "content-type": "application/json",
        "x-openclaw-session-key": SESSION_KEY,
      },
      body: JSON.stringify({ model: "openclaw", messages: [{ role: "user", content: text }] }),
      signal: AbortSignal.timeout(900_000),
    });
    const body = (await response.json().catch(() => ({}))) as {
      choices?: Array<{ message?: { content?: string } }>;
      error?: { message?: string };
    };
    if (!response.ok)
      throw new Error(`the gateway refused the message: ${response.status} ${body.error?.message ?? ""}`);
    return body.choices?.[0]?.message?.content ?? "";
  }

  async close(): Promise<void> {
    this.stopHost?.();
    const server = this.server;
    if (!server) return;
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
}

/** The text of the transcript's last assistant message (content as a string or as text parts). */
export function lastAssistantText(messages: unknown[]): string {
  for (const message of [...messages].reverse()) {
    const { role, content } = (message ?? {}) as { role?: unknown; content?: unknown };
    if (role !== "assistant") continue;
    if (typeof content === "string") return content;
    if (Array.isArray(content)) {
      const parts = content.flatMap((part) => {
        const text = (part as { type?: unknown; text?: unknown })?.text;
        return typeof text === "string" ? [text] : [];
      });
      if (parts.length > 0) return parts.join("\n");
    }
  }
  return "";
}
