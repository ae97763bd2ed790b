// The reference host (src/reference-host) as a plain server in front of an emulated VM1 and the plugin's real routes
// (test/suspend/plugin-server.ts): bodies over the limit are answered 413 before they are read (declared or
// streamed, over node:http and through the Fetch handler); a full nonce store refuses a notification with 503
// and a log line; `/message` needs the shared secret; concurrent messages while VM1 sleeps share one wake, and a
// running VM1 gets the message without one; an unauthenticated host will not bind beyond loopback.
// The specs share one VM1 and run in order: a notification puts VM1 to sleep, messages then wake it.
import { randomBytes } from "node:crypto";
import type http from "node:http";
import net, { type AddressInfo } from "node:net";
import { Sandbox } from "@vercel/sandbox";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type LocalSandboxApi, startLocalSandboxApi } from "../../src/emulator/index.js";
import { GatewayClient, MemoryNonceStore, signNotification, sleepVm, type VmConnection } from "../../src/host/index.js";
import {
  createHost,
  DEFAULT_MAX_BODY_BYTES,
  type HostConfig,
  InsecureBindError,
  serve,
} from "../../src/reference-host/index.js";
import { waitFor } from "../gateway/wait.js";
import { type PluginServer, servePlugin } from "../suspend/plugin-server.js";

const VM1 = "vm1-reference-host-spec";
const GATEWAY_TOKEN = randomBytes(16).toString("hex");
const NOTIFY_SECRET = randomBytes(16).toString("hex");
const MESSAGE_SECRET = randomBytes(16).toString("hex");
const START = "echo started >> /vercel/sandbox/starts; exec sleep 605";

let api: LocalSandboxApi | undefined;
let connection: VmConnection;
let plugin: PluginServer | undefined;
let hostServer: http.Server | undefined;
let hostUrl = "";
let hostConfig: HostConfig;
let host: ReturnType<typeof createHost>;
const outcomes: unknown[] = [];
const logs: string[] = [];

const vm1 = () => Sandbox.get({ ...connection, name: VM1 });
async function sh(script: string): Promise<string> {
  const done = await (await vm1()).runCommand("sh", ["-c", script]);
  return (await done.stdout()).trim();
}
/** How many times the gateway's start command ran in VM1 (the file is on VM1's disk, kept across sleeps). */
const starts = async () => Number(await sh("cat /vercel/sandbox/starts 2>/dev/null | wc -l"));

beforeAll(async () => {
  api = await startLocalSandboxApi({});
  connection = { ...api.credentials, fetch: api.fetch };
  await Sandbox.create({ ...connection, name: VM1, runtime: "node24" } as Parameters<typeof Sandbox.create>[0]);
  plugin = await servePlugin({ token: GATEWAY_TOKEN, idleMs: 0 });
  hostConfig = {
    gatewayUrl: plugin.baseUrl,
    gatewayToken: GATEWAY_TOKEN,
    notifySecret: NOTIFY_SECRET,
    messageSecret: MESSAGE_SECRET,
    connection,
    vmName: VM1,
    start: { cmd: "sh", args: ["-c", START] },
    // Ready once this wake's start command runs (a process, so not a file restored from before the sleep).
    ready: async () =>
      (await sh('for p in /proc/[0-9]*; do tr "\\0" " " < $p/cmdline 2>/dev/null; echo; done')).includes("sleep 605"),
    deliver: async (message, awake) => Response.json({ delivered: message.toString(), ...awake }),
    nonces: new MemoryNonceStore(1),
    onSlept: (outcome) => outcomes.push(outcome),
    log: (line) => logs.push(line),
  };
  host = createHost(hostConfig);
  hostServer = await serve(host, 0);
  hostUrl = `http://127.0.0.1:${(hostServer.address() as AddressInfo).port}`;
}, 120_000);

afterAll(async () => {
  hostServer?.closeAllConnections();
  await new Promise((resolve) => (hostServer ? hostServer.close(resolve) : resolve(undefined)));
  await plugin?.close();
  await api?.close();
}, 60_000);

/**
 * Sends a request's head and `bodyStart` over a raw socket and never finishes the body: resolves with the status
 * line the server answers meanwhile (the server must answer before the body ends, or this times out).
 */
function answerBeforeBodyEnds(path: string, head: Record<string, string>, bodyStart: Buffer): Promise<string> {
  const { port } = hostServer!.address() as AddressInfo;
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, "127.0.0.1");
    let received = "";
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new Error(`no answer to ${path} within 10 s while its body was unfinished`));
    }, 10_000);
    socket.on("data", (data) => {
      received += data.toString("latin1");
      if (!received.includes("\r\n")) return;
      clearTimeout(timer);
      socket.destroy();
      resolve(received.slice(0, received.indexOf("\r\n")));
    });
    socket.on("error", (error) => {
      clearTimeout(timer);
      reject(error);
    });
    const lines = Object.entries({ host: "127.0.0.1", ...head }).map(([k, v]) => `${k}: ${v}`);
    socket.write(`POST ${path} HTTP/1.1\r\n${lines.join("\r\n")}\r\n\r\n`);
    socket.write(bodyStart);
  });
}

/** A chunked body of `bytes` in 1 KiB chunks, without the final chunk that would end it. */
function unfinishedChunks(bytes: number): Buffer {
  const parts: Buffer[] = [];
  for (let left = bytes; left > 0; left -= 1024) {
    const size = Math.min(1024, left);
    parts.push(Buffer.from(`${size.toString(16)}\r\n`), Buffer.alloc(size, 0x61), Buffer.from("\r\n"));
  }
  return Buffer.concat(parts);
}

const auth = { authorization: `Bearer ${MESSAGE_SECRET}` };
const message = (text: string, headers: Record<string, string> = auth) =>
  fetch(`${hostUrl}/message`, { method: "POST", headers, body: JSON.stringify({ text }) });

function notify(instanceId: string) {
  const body = JSON.stringify({ version: 1, reason: "idle", instanceId, sentAtMs: Date.now(), lastActivityMs: 0 });
  return fetch(`${hostUrl}/notify`, { method: "POST", headers: signNotification(NOTIFY_SECRET, body), body });
}

describe("reference host: bounded bodies", () => {
  it.each(["/notify", "/message"])(
    "%s: a declared Content-Length over the limit is answered 413 at once",
    async (path) => {
      const status = await answerBeforeBodyEnds(
        path,
        { ...auth, "content-type": "application/json", "content-length": String(10 ** 12) },
        Buffer.alloc(1024, 0x61),
      );
      expect(status).toBe("HTTP/1.1 413 Payload Too Large");
    },
  );

  it.each(["/notify", "/message"])("%s: a streamed body is answered 413 once it passes the limit", async (path) => {
    const status = await answerBeforeBodyEnds(
      path,
      { ...auth, "content-type": "application/json", "transfer-encoding": "chunked" },
      unfinishedChunks(DEFAULT_MAX_BODY_BYTES + 1),
    );
    expect(status).toBe("HTTP/1.1 413 Payload Too Large");
  });

  it("the Fetch handler (as a Vercel Function) stops reading a body once it passes the limit, and answers 413", async () => {
    const chunks = 1024; // 1 MiB in all, 16 times the limit
    let pulled = 0;
    const big = new ReadableStream<Uint8Array>({
      pull(controller) {
        pulled++;
        controller.enqueue(new Uint8Array(1024));
        if (pulled === chunks) controller.close();
      },
    });
    const response = await host.fetch(
      new Request("http://host.invalid/notify", { method: "POST", body: big, duplex: "half" } as RequestInit),
    );
    expect(response.status).toBe(413);
    expect(pulled * 1024).toBeLessThan(DEFAULT_MAX_BODY_BYTES + 8 * 1024);
  });
});

describe("reference host: notifications", () => {
  it("an accepted notification sleeps VM1; a new one while the nonce store is full is refused 503 and logged", {
    timeout: 120_000,
  }, async () => {
    expect((await notify("instance-a")).status).toBe(202);
    const outcome = await waitFor("the host's sleep", async () => outcomes[0], { timeoutMs: 90_000 });
    expect(outcome).toMatchObject({ slept: true });
    expect((await vm1()).status).toBe("stopped");

    const refused = await notify("instance-a");
    expect(refused.status).toBe(503);
    expect(await refused.json()).toEqual({ error: "NonceStoreFullError" });
    expect(logs).toEqual([expect.stringMatching(/nonce store holds 1 live nonces/)]);
    expect(logs.join("\n")).not.toContain(NOTIFY_SECRET);
  });
});

describe("reference host: messages", () => {
  it.each([
    ["no Authorization header", {}],
    ["another secret", { authorization: `Bearer ${MESSAGE_SECRET}x` }],
    ["the notification secret", { authorization: `Bearer ${NOTIFY_SECRET}` }],
  ])("a message with %s is refused 401 and does not wake VM1", async (_what, headers) => {
    const response = await message("hello", headers);
    expect(response.status).toBe(401);
    expect((await vm1()).status).toBe("stopped");
  });

  it("concurrent messages while VM1 sleeps share one wake, and each is delivered", { timeout: 120_000 }, async () => {
    const before = await starts(); // a command resumes VM1 (without the gateway) if an earlier spec left it asleep
    await sleepVm({ connection, name: VM1 });
    expect((await vm1()).status).toBe("stopped");
    const answers = await Promise.all(["one", "two", "three"].map((text) => message(text)));
    const bodies = await Promise.all(
      answers.map(async (r) => (await r.json()) as { delivered: string; woke: boolean }),
    );
    expect(answers.map((r) => r.status)).toEqual([200, 200, 200]);
    expect(bodies.map((b) => b.delivered)).toEqual(['{"text":"one"}', '{"text":"two"}', '{"text":"three"}']);
    expect(bodies.map((b) => b.woke)).toEqual([true, true, true]);
    expect(await starts()).toBe(before + 1);
    // The gateway's lease from the sleep was resumed: admission is open.
    const gateway = new GatewayClient({ baseUrl: plugin!.baseUrl, token: GATEWAY_TOKEN });
    expect((await gateway.status()).suspension).toEqual({ phase: "running" });
  });

  it("a message to a running VM1 is delivered without a wake", async () => {
    expect((await vm1()).status).toBe("running");
    const before = await starts();
    const response = await message("while running");
    expect(response.status).toBe(200);
    expect(await response.json()).toMatchObject({ delivered: '{"text":"while running"}', woke: false });
    expect(await starts()).toBe(before);
  });

  it("a host whose /message takes no secret refuses to bind beyond loopback", async () => {
    const { messageSecret: _none, ...open } = hostConfig;
    await expect(serve(createHost(open), 0, "0.0.0.0")).rejects.toBeInstanceOf(InsecureBindError);
  });
});
