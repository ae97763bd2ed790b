// Exposed ports as on Vercel: `sandbox.domain(port)` is an https URL the emulator serves (TLS from its own CA,
// which sandboxes trust), reaching the sandbox's server for HTTP and WebSocket alike, from the host and from
// another sandbox whose egress policy allows the name; unexposed ports and disallowed sandboxes get nowhere.
import { Agent, buildConnector, fetch as undiciFetch, WebSocket } from "undici";
import { describe, expect, it } from "vitest";
import { connect, SDKS, useEmulator } from "./harness.js";

const emulator = useEmulator();

// A plain HTTP server and a minimal WebSocket echo (small text frames), plus an unexposed port.
const SERVER = `
const http = require("node:http"); const crypto = require("node:crypto");
const server = http.createServer((req, res) => res.end("hello from the sandbox via " + req.headers.host));
server.on("upgrade", (req, socket) => {
  const accept = crypto.createHash("sha1").update(req.headers["sec-websocket-key"] + "258EAFA5-E914-47DA-95CA-C5AB0DC85B11").digest("base64");
  socket.write("HTTP/1.1 101 Switching Protocols\\r\\nUpgrade: websocket\\r\\nConnection: Upgrade\\r\\nSec-WebSocket-Accept: " + accept + "\\r\\n\\r\\n");
  socket.on("data", (frame) => {
    const length = frame[1] & 127; const mask = frame.subarray(2, 6);
    const data = Buffer.from(frame.subarray(6, 6 + length)).map((b, i) => b ^ mask[i % 4]);
    const text = Buffer.from("echo: " + data.toString());
    socket.write(Buffer.concat([Buffer.from([0x81, text.length]), text]));
  });
});
server.listen(3000, "0.0.0.0", () => console.log("listening"));
http.createServer((req, res) => res.end("unexposed")).listen(3001, "0.0.0.0");
`;

async function until<T>(probe: () => Promise<T | undefined>, what: string): Promise<T> {
  for (let i = 0; i < 100; i++) {
    const value = await probe().catch(() => undefined);
    if (value !== undefined) return value;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`timed out waiting for ${what}`);
}

describe.each(SDKS)("exposed ports with SDK %s", (_version, { Sandbox }) => {
  it("domain(port) answers HTTP and WebSocket from the host and from an allowed sandbox; nothing else gets through", async () => {
    const api = emulator();
    const server = await Sandbox.create({ ...connect(api), ports: [3000] });
    await server.writeFiles([{ path: "server.js", content: Buffer.from(SERVER) }]);
    await server.runCommand({ cmd: "node", args: ["server.js"], detached: true });
    const url = server.domain(3000);
    expect(url).toMatch(/^https:\/\/[a-z0-9-]+-3000\.vercel\.run$/);
    const host = new URL(url).host;

    // From the host, through api.fetch, which routes *.vercel.run to the emulator.
    const answer = await until(async () => {
      const response = await api.fetch(url);
      return response.status === 200 ? response.text() : undefined;
    }, "the route to answer");
    expect(answer).toBe(`hello from the sandbox via ${host}`);
    const unexposed = await api.fetch(url.replace("-3000.", "-3001."));
    expect(unexposed.status).toBe(502);

    // A WebSocket through the same route, trusting only the emulator's CA.
    const socket = new WebSocket(`wss://${host}/`, { dispatcher: await api.routes.dispatcher() });
    const echoed = await new Promise<string>((resolve, reject) => {
      socket.addEventListener("open", () => socket.send("ping"));
      socket.addEventListener("message", (event) => resolve(String(event.data)));
      socket.addEventListener("error", () => reject(new Error("websocket error")));
    });
    socket.close();
    expect(echoed).toBe("echo: ping");
    // Nothing but the emulator's CA vouches for the route: the same connection with only public roots fails.
    const { port } = await api.routes.address();
    const publicRoots = buildConnector({});
    const untrusted = new Agent({
      connect: (o, cb) => publicRoots({ ...o, hostname: "127.0.0.1", port: String(port), servername: o.hostname }, cb),
    });
    const failure = await undiciFetch(url, { dispatcher: untrusted }).catch(
      (e: Error & { cause?: Error }) => e.cause ?? e,
    );
    expect(String(failure)).toMatch(/certificate/i);
    await untrusted.close();

    // From another sandbox whose policy names the route, through its egress proxy (curl trusts the image's bundle).
    const allowed = await Sandbox.create({ ...connect(api), networkPolicy: { allow: [host] } });
    const viaCurl = await allowed.runCommand("curl", ["-sS", "--max-time", "20", url]);
    expect(await viaCurl.stdout()).toBe(`hello from the sandbox via ${host}`);
    const viaNode = await allowed.runCommand("node", [
      "-e",
      `fetch(${JSON.stringify(url)}).then(r => r.text()).then(t => process.stdout.write(t))`,
    ]);
    expect(await viaNode.stdout()).toBe(`hello from the sandbox via ${host}`);

    // A WebSocket from that sandbox too (Node's own client), echoed by the server behind the route. The echo
    // server here knows no close handshake, so the client exits once it has the answer.
    const wsScript = `const ws = new WebSocket(${JSON.stringify(`wss://${host}/`)}); ws.onopen = () => ws.send("from B");
      ws.onmessage = (e) => process.stdout.write(String(e.data), () => process.exit(0)); ws.onerror = () => process.exit(1);`;
    const viaWs = await allowed.runCommand("node", ["-e", wsScript]);
    expect(await viaWs.stdout()).toBe("echo: from B");

    // A client that ignores proxy variables (a raw TLS socket, as the OpenClaw node's WebSocket is) resolves
    // the name from the sandbox's hosts file and reaches the route too, only while the policy allows the name.
    const direct = `require("node:tls").connect({ host: ${JSON.stringify(host)}, port: 443, servername: ${JSON.stringify(host)} }, function () {
      this.write("GET / HTTP/1.1\\r\\nhost: ${host}\\r\\nconnection: close\\r\\n\\r\\n"); }).on("data", (d) => process.stdout.write(d)).on("error", (e) => console.log("error " + e.code));`;
    const raw = async (sandbox: typeof allowed) =>
      await (await sandbox.runCommand({ cmd: "node", args: ["-e", direct], env: { NO_PROXY: "*" } })).stdout();
    expect(await raw(allowed)).toMatch(new RegExp(`^HTTP/1.1 200[^]*hello from the sandbox via ${host}$`));
    await allowed.updateNetworkPolicy({ allow: ["example.invalid"] });
    expect(await raw(allowed)).toMatch(/^HTTP\/1.1 403 Forbidden/);

    // A sandbox whose policy does not name it cannot connect.
    const denied = await Sandbox.create({ ...connect(api), networkPolicy: { allow: ["example.invalid"] } });
    const refused = await denied.runCommand("curl", [
      "-sS",
      "--max-time",
      "20",
      "-o",
      "/dev/null",
      "-w",
      "%{http_code}",
      url,
    ]);
    expect(refused.exitCode).not.toBe(0);
    expect(await refused.stderr()).toMatch(/403/);

    for (const sandbox of [server, allowed, denied]) await sandbox.delete();
  });
});
