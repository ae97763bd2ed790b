// The firewall's request rules, applied in the emulator's egress as Vercel's firewall does: headers set on
// the way out (`transform`), requests forwarded (`forwardURL`) or answered by the proxy (`response`),
// matched by path, method, query and headers in declaration order, over TLS the emulator terminates with
// its CA. Every byte goes to servers this file starts on the host's 127.0.0.1; the injected secret is
// checked to exist nowhere the sandbox can see.
import { randomBytes } from "node:crypto";
import { mkdtemp, rm } from "node:fs/promises";
import { createServer as createHttpServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import { createServer as createHttpsServer } from "node:https";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { claimingRule, type RequestRule, rulesFor } from "../../src/emulator/egress-rules.js";
import { type LocalSandboxApi, startLocalSandboxApi } from "../../src/emulator/index.js";
import { issueCertificates } from "../../src/infra/index.js";
import { connect, raw, SDKS } from "./harness.js";

const SECRET = `sk-firewall-${randomBytes(12).toString("hex")}`;
const THROUGH_PROXY = { NO_PROXY: "", no_proxy: "" };

interface Seen {
  server: string;
  method: string;
  url: string;
  headers: IncomingMessage["headers"];
}
const seen: Seen[] = [];
let api: LocalSandboxApi;
let certDir: string;
const servers: Server[] = [];
let tlsPort: number;
let plainPort: number;

/** Answers whether the request carried the secret, never the secret itself. */
const recorder = (server: string) => (req: IncomingMessage, res: ServerResponse) => {
  seen.push({ server, method: req.method ?? "", url: req.url ?? "", headers: req.headers });
  const auth = req.headers.authorization === `Bearer ${SECRET}` ? "ok" : "missing";
  res.end(`${server} ${req.method} ${req.url} auth:${auth}`);
};

async function listen(server: Server): Promise<number> {
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return (server.address() as AddressInfo).port;
}

beforeAll(async () => {
  certDir = await mkdtemp(path.join(tmpdir(), "firewall-upstream-"));
  const upstream = await issueCertificates(certDir, {
    caSubject: "firewall test upstream CA",
    leafSubject: "127.0.0.1",
    altName: "IP:127.0.0.1",
    caDays: 2,
    leafDays: 1,
  });
  const tls = createHttpsServer({ key: upstream.key, cert: upstream.cert }, recorder("tls"));
  // A protocol switch that echoes: says whether the upgrade request carried the secret, never the secret.
  tls.on("upgrade", (req: IncomingMessage, socket) => {
    const auth = req.headers.authorization === `Bearer ${SECRET}` ? "ok" : "missing";
    socket.write(`HTTP/1.1 101 Switching Protocols\r\nconnection: Upgrade\r\nupgrade: echo\r\nx-auth: ${auth}\r\n\r\n`);
    socket.on("data", (data: Buffer) => socket.write(data));
  });
  tlsPort = await listen(tls);
  plainPort = await listen(createHttpServer(recorder("plain")));
  api = await startLocalSandboxApi({ egressTrust: [upstream.ca] });
});

afterAll(async () => {
  await api?.close();
  for (const server of servers) {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
  await rm(certDir, { recursive: true, force: true });
});

const since = (mark: number) => seen.slice(mark);

describe.each(SDKS)("request rules with SDK %s", (_version, { Sandbox }) => {
  type Box = Awaited<ReturnType<typeof Sandbox.create>>;
  const sh = async (sandbox: Box, script: string) => {
    const done = await sandbox.runCommand({ cmd: "bash", args: ["-c", script], env: THROUGH_PROXY });
    return { code: done.exitCode, out: await done.stdout(), err: await done.stderr() };
  };
  const curl = (url: string, extra = "") => `curl -sS --max-time 20 ${extra} '${url}'`;

  it("transform sets the header on matching HTTPS requests only; the sandbox never holds the value", async () => {
    const sandbox = await Sandbox.create({
      ...connect(api),
      networkPolicy: {
        allow: {
          "127.0.0.1": [
            {
              match: { method: ["POST"], path: { startsWith: "/v1/" } },
              transform: [{ headers: { authorization: `Bearer ${SECRET}` } }],
            },
          ],
        },
      },
    });
    const tls = `https://127.0.0.1:${tlsPort}`;
    const mark = seen.length;
    const post = await sh(sandbox, curl(`${tls}/v1/chat`, "-X POST -H 'authorization: Bearer placeholder'"));
    expect(post.out).toBe("tls POST /v1/chat auth:ok");
    expect((await sh(sandbox, curl(`${tls}/v1/chat`, "-H 'authorization: Bearer placeholder'"))).out).toBe(
      "tls GET /v1/chat auth:missing",
    );
    expect((await sh(sandbox, curl(`${tls}/v2/chat`, "-X POST"))).out).toBe("tls POST /v2/chat auth:missing");
    // Plain http:// through the proxy is read the same way.
    expect((await sh(sandbox, curl(`http://127.0.0.1:${plainPort}/v1/x`, "-X POST"))).out).toBe(
      "plain POST /v1/x auth:ok",
    );
    expect(since(mark).map((s) => s.headers.authorization)).toEqual([
      `Bearer ${SECRET}`,
      "Bearer placeholder",
      undefined,
      `Bearer ${SECRET}`,
    ]);
    const search = await sh(
      sandbox,
      `{ env; cat /proc/self/environ; grep -rs -l -- '${SECRET}' /etc /tmp /home /root /vercel /var 2>/dev/null; } | grep -c -- '${SECRET}' || true`,
    );
    expect(search.out.trim()).toBe("0");
    const readBack = JSON.stringify((await Sandbox.get({ ...connect(api), name: sandbox.name })).networkPolicy);
    expect(readBack).not.toContain(SECRET);
    expect(JSON.stringify(api.requests())).not.toContain(SECRET);
    await sandbox.delete();
  });

  it("forwardURL sends matching requests to the forward target with Vercel's forwarded headers", async () => {
    const sandbox = await Sandbox.create({
      ...connect(api),
      networkPolicy: {
        allow: {
          "127.0.0.1": [{ match: { path: { exact: "/fwd" } }, forwardURL: `http://127.0.0.1:${plainPort}/proxy/` }],
        },
      },
    });
    const mark = seen.length;
    const out = await sh(sandbox, curl(`https://127.0.0.1:${tlsPort}/fwd?q=1`));
    expect(out.out).toBe("plain GET /proxy/fwd?q=1 auth:missing");
    const [forwarded] = since(mark);
    expect(forwarded?.headers).toMatchObject({
      "vercel-forwarded-host": "127.0.0.1",
      "vercel-forwarded-scheme": "https",
      "vercel-forwarded-port": String(tlsPort),
      "vercel-forwarded-path": "/fwd?q=1",
    });
    expect((await sh(sandbox, curl(`https://127.0.0.1:${tlsPort}/other`))).out).toBe("tls GET /other auth:missing");
    await sandbox.delete();
  });

  it("a policy update changes the rules of the next request", async () => {
    const inject = [{ headers: { authorization: `Bearer ${SECRET}` } }];
    const sandbox = await Sandbox.create({
      ...connect(api),
      networkPolicy: { allow: { "127.0.0.1": [{ match: { path: { exact: "/never" } }, transform: inject }] } },
    });
    const url = `https://127.0.0.1:${tlsPort}/v1/update`;
    expect((await sh(sandbox, curl(url))).out).toBe("tls GET /v1/update auth:missing");
    await sandbox.updateNetworkPolicy({
      allow: { "127.0.0.1": [{ transform: [{ headers: { authorization: `Bearer ${SECRET}` } }] }] },
    });
    expect((await sh(sandbox, curl(url))).out).toBe("tls GET /v1/update auth:ok");
    await sandbox.delete();
  });
});

describe("response rules and matching order (SDK latest, 3.4+)", () => {
  const { Sandbox } = SDKS[1]![1];

  it("the first matching rule claims the request; a trailing response rule answers the rest without contacting it", async () => {
    const sandbox = await Sandbox.create({
      ...connect(api),
      networkPolicy: {
        allow: {
          "127.0.0.1": [
            {
              match: { queryString: [{ key: { exact: "tier" }, value: { exact: "gold" } }] },
              transform: [{ headers: { authorization: `Bearer ${SECRET}` } }],
            },
            {
              match: { headers: [{ key: { exact: "X-Ask" }, value: { regex: "^yes" } }] },
              response: { statusCode: 418, body: "from the firewall", contentType: "text/plain" },
            },
            { response: { statusCode: 403, body: "denied", contentType: "text/plain" } },
          ],
        },
      },
    });
    const run = async (args: string) => {
      const done = await sandbox.runCommand({
        cmd: "bash",
        args: ["-c", `curl -sS --max-time 20 -w ' %{http_code}' ${args}`],
        env: THROUGH_PROXY,
      });
      return done.stdout();
    };
    const base = `https://127.0.0.1:${tlsPort}`;
    const mark = seen.length;
    expect(await run(`'${base}/a?tier=gold'`)).toBe("tls GET /a?tier=gold auth:ok 200");
    expect(await run(`-H 'x-ask: yes please' '${base}/a?tier=silver'`)).toBe("from the firewall 418");
    expect(await run(`'${base}/b'`)).toBe("denied 403");
    expect(since(mark).map((s) => s.url)).toEqual(["/a?tier=gold"]);
    await sandbox.delete();
  });

  it("rule shapes Vercel refuses are a 400 from the API, not a silent accept", async () => {
    const bad = [
      { transform: [{ headers: { a: "b" } }], response: { statusCode: 200 } },
      { match: { path: { regex: "(" } }, transform: [] },
      { forwardURL: "https://proxy.test/x?q=1" },
      { response: { statusCode: 204, body: "x", contentType: "text/plain" } },
      { response: { statusCode: 200, headers: { "Content-Length": "1" } } },
    ];
    for (const rule of bad) {
      const created = await raw(
        api,
        "POST",
        "/v3/sandboxes",
        JSON.stringify({ projectId: api.credentials.projectId, networkPolicy: { allow: { "x.test": [rule] } } }),
      );
      expect(created.status).toBe(400);
      expect(created.json.error?.message).toContain("networkPolicy");
    }
  });
});

describe("protocol upgrades through a host with rules", () => {
  const { Sandbox } = SDKS[1]![1];

  it("a WebSocket-style upgrade gets the transform's headers and then carries bytes both ways", async () => {
    const sandbox = await Sandbox.create({
      ...connect(api),
      networkPolicy: {
        allow: { "127.0.0.1": [{ transform: [{ headers: { authorization: `Bearer ${SECRET}` } }] }] },
      },
    });
    const client = `const https = require("node:https");
const req = https.request({ host: "127.0.0.1", port: ${tlsPort}, path: "/ws", headers: { connection: "Upgrade", upgrade: "echo" } });
req.on("upgrade", (res, socket) => { socket.write("ping"); socket.once("data", (d) => { console.log(res.statusCode, res.headers["x-auth"], String(d)); process.exit(0); }); });
req.on("response", (res) => { console.log("no upgrade", res.statusCode); process.exit(1); });
req.on("error", (e) => { console.log("error", e.message); process.exit(2); });
req.end();`;
    const done = await sandbox.runCommand({ cmd: "node", args: ["-e", client], env: THROUGH_PROXY });
    expect(await done.stdout()).toBe("101 ok ping\n");
    await sandbox.delete();
  });
});

describe("rule selection (pure)", () => {
  const request = (over: Partial<Parameters<typeof claimingRule>[1]> = {}) => ({
    method: "GET",
    path: "/",
    query: new URLSearchParams(),
    headers: {},
    ...over,
  });
  const tagged = (tag: string, match?: RequestRule["match"]): RequestRule => ({
    ...(match ? { match } : {}),
    transform: [{ headers: { tag } }],
  });

  it("the exact entry beats the longest wildcard, which beats *", () => {
    const policy = {
      allow: {
        "*": [tagged("star")],
        "*.example.com": [tagged("wide")],
        "*.api.example.com": [tagged("narrow")],
        "v1.api.example.com": [tagged("exact")],
        "empty.example.com": [],
      },
    };
    const tag = (host: string) =>
      (rulesFor(policy, host)[0] as { transform: Array<{ headers: Record<string, string> }> } | undefined)?.transform[0]
        ?.headers.tag;
    expect(tag("v1.api.example.com")).toBe("exact");
    expect(tag("v2.api.example.com")).toBe("narrow");
    expect(tag("www.example.com")).toBe("wide");
    expect(tag("other.test")).toBe("star");
    expect(tag("example.com")).toBe("star");
    expect(rulesFor({ allow: ["*"] }, "x.test")).toEqual([]);
  });

  it("methods are ORed, header and query matchers ANDed, header names case-insensitive", () => {
    const rule = tagged("r", {
      method: ["post", "PUT"],
      headers: [{ key: { exact: "X-One" } }, { key: { startsWith: "x-t" }, value: { exact: "2" } }],
      queryString: [{ key: { exact: "a" }, value: { regex: "^\\d+$" } }],
    });
    const good = request({
      method: "PUT",
      headers: { "x-one": "1", "x-two": "2" },
      query: new URLSearchParams("a=12&b=x"),
    });
    expect(claimingRule([rule], good)).toBe(rule);
    expect(claimingRule([rule], { ...good, method: "GET" })).toBeUndefined();
    expect(claimingRule([rule], { ...good, headers: { "x-one": "1" } })).toBeUndefined();
    expect(claimingRule([rule], { ...good, query: new URLSearchParams("a=x") })).toBeUndefined();
  });
});
