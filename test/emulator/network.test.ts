// Egress enforcement. Every byte of test traffic goes to a server this file starts on the
// host's 127.0.0.1 (never a non-loopback address); inside a sandbox 127.0.0.1 is the sandbox's
// own loopback, so reaching the host's server is only possible through the emulator's proxy.
import type { LookupAddress } from "node:dns";
import { createServer, type Server } from "node:http";
import type { AddressInfo, Socket } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { allowedAddresses, egressRules, hostAllowed, isHostAddress } from "../../src/emulator/egress-policy.js";
import { connect, SDKS, useEmulator } from "./harness.js";

const emulator = useEmulator();

/** Paths the host server was asked for, and its open sockets (to see tunnels end). */
const seen: string[] = [];
const open = new Set<Socket>();
let server: Server;
let port: number;

beforeAll(async () => {
  server = createServer((req, res) => {
    seen.push(req.url ?? "");
    if (req.url === "/hang") return; // Held open until the session ends.
    if (req.url === "/chunked") return void res.write("chunk one, ", () => res.end("chunk two"));
    res.end(`hello ${req.url}`);
  });
  server.on("connection", (socket: Socket) => {
    open.add(socket);
    socket.once("close", () => open.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  port = (server.address() as AddressInfo).port;
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

/** Inside the sandbox, "127.0.0.1" is its own loopback: only clearing NO_PROXY sends it to the proxy. */
const THROUGH_PROXY = { NO_PROXY: "", no_proxy: "" };

async function until(check: () => boolean, what: string): Promise<void> {
  for (let i = 0; i < 200; i++) {
    if (check()) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`timed out waiting for ${what}`);
}

describe.each(SDKS)("network policies with SDK %s", (_version, { Sandbox }) => {
  type Box = Awaited<ReturnType<typeof Sandbox.create>>;
  const sh = async (sandbox: Box, script: string, env: Record<string, string> = THROUGH_PROXY) => {
    const done = await sandbox.runCommand({ cmd: "bash", args: ["-c", script], env });
    return { code: done.exitCode, out: await done.stdout(), err: await done.stderr() };
  };
  const curl = (path: string, host = "127.0.0.1") => `curl -sS --max-time 20 http://${host}:${port}${path}`;
  const status = (path: string, host = "127.0.0.1") =>
    `curl -s --max-time 20 -o /dev/null -w '%{http_code}' http://${host}:${port}${path}`;

  it("a custom policy leaves commands only lo: a direct connection to the host fails", async () => {
    const sandbox = await Sandbox.create({ ...connect(emulator()), networkPolicy: { allow: ["127.0.0.1"] } });
    const links = await sh(sandbox, "ip -o link | awk -F': ' '{print $2}'");
    expect(links.out.trim().split("\n")).toEqual(["lo"]);
    const direct = await sh(sandbox, `exec 3<>/dev/tcp/127.0.0.1/${port} && echo reached || echo blocked`);
    expect(direct.out).toContain("blocked");
    const noProxy = await sh(sandbox, `curl -sS --max-time 20 --noproxy '*' http://127.0.0.1:${port}/direct`);
    expect(noProxy.code).not.toBe(0);
    expect(seen).not.toContain("/direct");
    await sandbox.delete();
  });

  it("an allowed IP literal is reached through the proxy by curl over plain HTTP and over CONNECT", async () => {
    const sandbox = await Sandbox.create({ ...connect(emulator()), networkPolicy: { allow: ["127.0.0.1"] } });
    expect((await sh(sandbox, curl("/plain"))).out).toBe("hello /plain");
    expect((await sh(sandbox, `${curl("/tunnel")} --proxytunnel`)).out).toBe("hello /tunnel");
    expect((await sh(sandbox, curl("/chunked"))).out).toBe("chunk one, chunk two");
    await sandbox.delete();
  });

  it("node's fetch in the sandbox goes through the proxy from the environment", async () => {
    const sandbox = await Sandbox.create({ ...connect(emulator()), networkPolicy: { allow: ["127.0.0.1"] } });
    const script = `fetch("http://127.0.0.1:${port}/node").then((r) => r.text()).then((t) => console.log(t))`;
    const done = await sandbox.runCommand({ cmd: "node", args: ["-e", script], env: THROUGH_PROXY });
    expect(await done.stdout()).toBe("hello /node\n");
    await sandbox.delete();
  });

  it("a destination the policy does not allow gets 403 from the proxy and is never contacted", async () => {
    const sandbox = await Sandbox.create({ ...connect(emulator()), networkPolicy: { allow: ["allowed.invalid"] } });
    expect((await sh(sandbox, status("/refused"))).out).toBe("403");
    const tunnel = await sh(sandbox, `${curl("/refused-tunnel")} --proxytunnel`);
    expect(tunnel.code).not.toBe(0);
    expect(tunnel.err).toContain("403");
    expect(seen).not.toContain("/refused");
    expect(seen).not.toContain("/refused-tunnel");
    await sandbox.delete();
  });

  it("subnets.allow admits an address, subnets.deny beats an allowed host, and updates apply to the next connection", async () => {
    const sandbox = await Sandbox.create({
      ...connect(emulator()),
      networkPolicy: { allow: [], subnets: { allow: ["127.0.0.0/8"] } },
    });
    expect((await sh(sandbox, curl("/subnet"))).out).toBe("hello /subnet");
    await sandbox.updateNetworkPolicy({ allow: ["127.0.0.1"], subnets: { deny: ["127.0.0.0/8"] } });
    expect((await sh(sandbox, status("/denied"))).out).toBe("403");
    // `*` admits every host but not the host's own addresses: only naming 127.0.0.1 does.
    await sandbox.updateNetworkPolicy({ allow: ["*"] });
    expect((await sh(sandbox, status("/star"))).out).toBe("403");
    await sandbox.updateNetworkPolicy({ allow: ["*", "127.0.0.1"] });
    expect((await sh(sandbox, curl("/named"))).out).toBe("hello /named");
    expect(seen).not.toContain("/denied");
    expect(seen).not.toContain("/star");
    await sandbox.delete();
  });

  it("an allowed hostname that resolves to the host's loopback is refused; only the address named explicitly reaches it", async () => {
    const api = emulator();
    const apiPort = new URL(api.url).port;
    const sandbox = await Sandbox.create({ ...connect(api), networkPolicy: { allow: ["localhost"] } });
    expect((await sh(sandbox, status("/by-name", "localhost"))).out).toBe("403");
    // The emulator's own API is on the host's loopback too: the proxy refuses it before it is contacted.
    const toApi = `curl -s --max-time 20 http://localhost:${apiPort}/v2/sandboxes`;
    expect((await sh(sandbox, toApi)).out).toMatch(/not allowed by the sandbox network policy/);
    expect(api.requests().filter((r) => r.method === "GET" && r.path === "/v2/sandboxes")).toEqual([]);
    await sandbox.updateNetworkPolicy({ allow: ["127.0.0.1"] });
    expect((await sh(sandbox, curl("/by-address"))).out).toBe("hello /by-address");
    expect(seen).not.toContain("/by-name");
    await sandbox.delete();
  });

  it("every policy but deny-all leaves through the proxy; allow-all does not reach the host's loopback", async () => {
    const sandbox = await Sandbox.create(connect(emulator()));
    const probe = `echo "proxy=\${HTTPS_PROXY:-none}"; exec 3<>/dev/tcp/127.0.0.1/${port} && echo reached || echo blocked`;
    expect((await sh(sandbox, probe, {})).out).toMatch(/^proxy=http:\/\/127\.0\.0\.1:\d+\nblocked\n$/);
    expect((await sh(sandbox, status("/allow-all"))).out).toBe("403");
    await sandbox.updateNetworkPolicy("deny-all");
    expect((await sh(sandbox, probe, {})).out).toBe("proxy=none\nblocked\n");
    await sandbox.updateNetworkPolicy({ allow: ["127.0.0.1"] });
    expect((await sh(sandbox, probe, {})).out).toMatch(/^proxy=http:\/\/127\.0\.0\.1:\d+\nblocked\n$/);
    expect(seen).not.toContain("/allow-all");
    await sandbox.delete();
  });

  it("stopping the session closes its tunnels; the resumed session gets a working proxy again", async () => {
    const sandbox = await Sandbox.create({ ...connect(emulator()), networkPolicy: { allow: ["127.0.0.1"] } });
    const before = seen.filter((p) => p === "/hang").length;
    const openBefore = open.size;
    await sandbox.runCommand({
      cmd: "curl",
      args: ["-sS", "--proxytunnel", `http://127.0.0.1:${port}/hang`],
      env: THROUGH_PROXY,
      detached: true,
    });
    await until(() => seen.filter((p) => p === "/hang").length > before, "the tunnelled request");
    expect(open.size).toBeGreaterThan(openBefore);
    await sandbox.stop();
    await until(() => open.size === openBefore, "the tunnel to close");
    expect((await sh(sandbox, curl("/again"))).out).toBe("hello /again");
    await sandbox.delete();
  });
});

describe("egress rules", () => {
  const v4 = (address: string): LookupAddress => ({ address, family: 4 });

  it("a *. wildcard matches subdomains only, and * matches every host", () => {
    const rules = egressRules({ allow: ["*.example.com", "exact.test"] });
    expect(hostAllowed(rules, "a.example.com")).toBe(true);
    expect(hostAllowed(rules, "a.b.EXAMPLE.com.")).toBe(true);
    expect(hostAllowed(rules, "example.com")).toBe(false);
    expect(hostAllowed(rules, "badexample.com")).toBe(false);
    expect(hostAllowed(rules, "exact.test")).toBe(true);
    expect(hostAllowed(rules, "sub.exact.test")).toBe(false);
    expect(hostAllowed(egressRules({ allow: ["*"] }), "anything.test")).toBe(true);
  });

  it("the rule-map form of allow lists its keys as hosts", () => {
    expect(hostAllowed(egressRules({ allow: { "api.test": [] } }), "api.test")).toBe(true);
  });

  it("subnets.deny wins over allowed names and subnets; deny-all admits nothing", () => {
    const rules = egressRules({ allow: ["host.test"], subnets: { allow: ["10.0.0.0/8"], deny: ["10.1.0.0/16"] } });
    expect(allowedAddresses(rules, "host.test", [v4("192.0.2.1"), v4("10.1.2.3")])).toEqual([v4("192.0.2.1")]);
    expect(allowedAddresses(rules, "other.test", [v4("10.2.0.1"), v4("10.1.0.1"), v4("192.0.2.1")])).toEqual([
      v4("10.2.0.1"),
    ]);
    expect(allowedAddresses(egressRules({ mode: "deny-all" }), "host.test", [v4("10.2.0.1")])).toEqual([]);
    expect(allowedAddresses(egressRules({ mode: "allow-all" }), "x.test", [v4("10.2.0.1")])).toEqual([v4("10.2.0.1")]);
  });

  it("the host's own addresses are admitted only when the policy names them", () => {
    const own = new Set(["192.0.2.7"]);
    const hostSide = [v4("127.0.0.1"), v4("169.254.169.254"), v4("0.0.0.0"), v4("192.0.2.7"), v4("::ffff:127.0.0.2")];
    for (const policy of [{ mode: "allow-all" }, { allow: ["*"] }, { allow: ["host.test"] }]) {
      expect(allowedAddresses(egressRules(policy), "host.test", hostSide, own)).toEqual([]);
    }
    expect(allowedAddresses(egressRules({ mode: "allow-all" }), "x.test", [v4("::1")], own)).toEqual([]);
    expect(allowedAddresses(egressRules({ allow: ["127.0.0.1"] }), "127.0.0.1", [v4("127.0.0.1")], own)).toEqual([
      v4("127.0.0.1"),
    ]);
    expect(
      allowedAddresses(
        egressRules({ allow: [], subnets: { allow: ["192.0.2.0/24"] } }),
        "h.test",
        [v4("192.0.2.7")],
        own,
      ),
    ).toEqual([v4("192.0.2.7")]);
    expect(isHostAddress("203.0.113.9", own)).toBe(false);
  });
});
