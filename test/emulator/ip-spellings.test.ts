// The host's own addresses stay out of reach whatever their spelling: every way URL parsers, inet_aton/
// getaddrinfo and inet_pton accept to write an address (`127.1`, `2130706433`, `0x7f.1`, `0177.0.0.1`,
// `[::ffff:7f00:1]`, `0:0:0:0:0:ffff:…`, zone ids, upper case, a trailing dot…) reads as that one address
// (ip-literal.ts), so `allow-all` refuses them all and naming an address admits its spellings and nothing
// else. Pure tables first, then the proxy with a resolver of the test's own, then the whole path: a
// sandbox created with the real SDK sends raw requests to its proxy. Servers run on the host's loopback
// and on a test host this file creates (a veth pair into a network namespace of its own, removed
// afterwards); no traffic goes anywhere else.
import { execFileSync } from "node:child_process";
import { randomInt } from "node:crypto";
import type { LookupAddress } from "node:dns";
import { createServer, type Server } from "node:http";
import { type AddressInfo, createServer as createTcpServer, connect as tcpConnect } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { allowedAddresses, directDestinations, egressRules, isHostAddress } from "../../src/emulator/egress-policy.js";
import { serveEgressProxy } from "../../src/emulator/egress-proxy.js";
import { hostAddresses } from "../../src/infra/host-addresses.js";
import { HostSpellingError, parseHost, parseSubnet } from "../../src/infra/ip-literal.js";
import { connect, SDKS, useEmulator } from "./harness.js";

/** Spellings of an IPv4 address, each read by WHATWG URL and by inet_aton as that address. */
function v4Spellings(address: string): string[] {
  const [a = 0, b = 0, c = 0, d = 0] = address.split(".").map(Number);
  const n = a * 2 ** 24 + b * 2 ** 16 + c * 2 ** 8 + d;
  const hex = (x: number) => `0x${x.toString(16)}`;
  const oct = (x: number) => `0${x.toString(8)}`;
  const group = (x: number, y: number) => ((x << 8) | y).toString(16);
  return [
    address,
    `${address}.`,
    String(n),
    hex(n),
    `0X${n.toString(16).toUpperCase().padStart(8, "0")}`,
    oct(n),
    [a, b, c, d].map(oct).join("."),
    [a, b, c, d].map(hex).join("."),
    `${a}.${b}.${(c << 8) | d}`,
    `${a}.${(b << 16) | (c << 8) | d}`,
    `${hex(a)}.${b}.${oct(c)}.${d}`,
    `${oct(a)}.${hex((b << 16) | (c << 8) | d)}`,
    `::ffff:${address}`,
    `[::ffff:${address}]`,
    `::ffff:${group(a, b)}:${group(c, d)}`,
    `[::FFFF:${group(a, b).toUpperCase()}:${group(c, d).toUpperCase()}]`,
    `0:0:0:0:0:ffff:${address}`,
    `0000:0000:0000:0000:0000:ffff:${group(a, b).padStart(4, "0")}:${group(c, d).padStart(4, "0")}`,
    `[0:0::ffff:${group(a, b)}:${group(c, d)}]`,
  ];
}

/** Spellings of an IPv6 address given in its compressed form with one `::`. */
function v6Spellings(address: string): string[] {
  const [head = "", tail = ""] = address.split("::");
  const left = head ? head.split(":") : [];
  const right = tail ? tail.split(":") : [];
  const groups = [...left, ...Array(8 - left.length - right.length).fill("0"), ...right];
  return [
    address,
    `[${address}]`,
    groups.join(":"),
    groups.map((g) => g.padStart(4, "0")).join(":"),
    `[${groups.map((g) => g.padStart(4, "0").toUpperCase()).join(":")}]`,
    `${address}%lo`,
    `[${address.toUpperCase()}%eth0]`,
  ];
}

const canonical = (host: string) => {
  const parsed = parseHost(host);
  return parsed.kind === "address" ? parsed.address : `name ${parsed.name}`;
};

describe("ip-literal: one address, every spelling", () => {
  const cases: Array<[string, string[]]> = [
    [
      "127.0.0.1",
      [
        "127.1",
        "127.0.1",
        "2130706433",
        "0x7f000001",
        "0x7F.1",
        "0177.0.0.1",
        "0177.0.0.01",
        "017700000001",
        "0x7f.0.0x0.1",
        "127.0.0x.1",
        "00000000000177.1",
        "127.0.0.1.",
        "::ffff:127.0.0.1",
        "::FFFF:7F00:1",
        "[::ffff:7f00:0001]",
        "0:0:0:0:0:ffff:127.0.0.1",
        "::ffff:127.0.0.1%lo",
        ...v4Spellings("127.0.0.1"),
      ],
    ],
    ["::1", ["0:0:0:0:0:0:0:1", "::0:1", "0::1", "::0.0.0.1", "[::1%lo]", ...v6Spellings("::1")]],
    ["192.0.2.7", ["3221225991", "0xc0.0.02.7", "192.519", "192.0.519", ...v4Spellings("192.0.2.7")]],
    ["0.0.0.0", ["0", "0x", "0.0", "00.0x0.0.0", "::ffff:0:0", "::ffff:0.0.0.0"]],
    ["::", ["0:0:0:0:0:0:0:0", "[::]", "::0", "0::0.0.0.0"]],
    ["fd00::2", ["FD00::0002", "fd00:0:0:0:0:0:0:2", "fd00::2%eth0", ...v6Spellings("fd00::2")]],
    ["fe80::1", ["fe80::1%lo", "FE80:0000::0001", "[fe80::1%25]"]],
    ["::7f00:1", ["::127.0.0.1", "0:0:0:0:0:0:7f00:1"]],
  ];
  it.each(cases)("every spelling of %s reads as it", (address, spellings) => {
    expect(new Set(spellings.map(canonical))).toEqual(new Set([address]));
  });

  it.each([
    ["localhost", "localhost"],
    ["Example.COM.", "example.com"],
    ["0x7f.example", "0x7f.example"],
    ["127.0.0.1.nip.io", "127.0.0.1.nip.io"],
    ["_srv.xn--bcher-kva.example", "_srv.xn--bcher-kva.example"],
  ])("a name stays a name: %s", (host, name) => {
    expect(parseHost(host)).toEqual({ kind: "name", name });
  });

  it.each([
    "127.0.0.256",
    "256.0.0.1",
    "1.2.3.4.5",
    "4294967296",
    "0x100000000",
    "127.16777216",
    "08.0.0.1",
    "0x7g.0.0.1",
    "127..1",
    "foo.123",
    "[127.0.0.1]",
    "[localhost]",
    "[::1",
    "::1]",
    "::ffff:127.1",
    "::ffff:0177.0.0.1",
    "::ffff:00007f00:1",
    "1:2:3:4:5:6:7:8:9",
    "1::2::3",
    ":::",
    "fe80::1%",
    "fe80::1%a%b",
    "fe80::1%a/b",
    "",
    ".",
    "exa mple.com",
    "ex@mple.com",
    "-start.example",
    `${"a".repeat(64)}.example`,
  ])("junk is refused with a clear error: %j", (host) => {
    expect(() => parseHost(host)).toThrow(HostSpellingError);
    expect(() => parseHost(host)).toThrow(/is not a valid host: /);
  });

  it("subnets are read in the same spellings; a mapped network of /96 or longer is the IPv4 network", () => {
    expect(parseSubnet("0x7f.0.0.0/8")).toEqual({ address: "127.0.0.0", family: 4, prefix: 8 });
    expect(parseSubnet("::ffff:127.0.0.0/104")).toEqual({ address: "127.0.0.0", family: 4, prefix: 8 });
    expect(parseSubnet("[::FFFF:7F00:1]")).toEqual({ address: "127.0.0.1", family: 4, prefix: 32 });
    expect(parseSubnet("::ffff:0:0/95")).toEqual({ address: "::ffff:0:0", family: 6, prefix: 95 });
    expect(parseSubnet("FD00:0::/8")).toEqual({ address: "fd00::", family: 6, prefix: 8 });
    for (const junk of ["10.0.0.1/", "10.0.0.1/33", "::/129", "10.0.0.0/8/8", "example.com/8", "10.0.0.0/+8"]) {
      expect(() => parseSubnet(junk), junk).toThrow(HostSpellingError);
    }
  });
});

describe("egress rules on canonical addresses", () => {
  const own = new Set(["192.0.2.7", "fd00::2"]);
  const found = (address: string): LookupAddress => ({ address, family: address.includes(":") ? 6 : 4 });
  const admitted = (policy: Record<string, unknown>, host: string, addresses: string[]) =>
    allowedAddresses(egressRules(policy), host, addresses.map(found), own).map((a) => a.address);
  const hostSide = [
    ...v4Spellings("127.0.0.1"),
    ...v4Spellings("192.0.2.7"),
    ...v6Spellings("::1"),
    ...v6Spellings("fd00::2"),
    "::ffff:0.0.0.0",
    "::ffff:169.254.169.254",
    "::7f00:1",
    "::ffff:0:7f00:1",
    "64:ff9b::c000:207",
    "2002:7f00:1::",
    "fe80::1%lo",
  ].map((spelling) => parseHost(spelling));

  it("every spelling of a host address is the host's under allow-all, * and an allowed name", () => {
    for (const target of hostSide) {
      if (target.kind !== "address") throw new Error("a host-side spelling read as a name");
      expect(isHostAddress(target.address, own), target.address).toBe(true);
      for (const policy of [{ mode: "allow-all" }, { allow: ["*"] }, { allow: ["host.test"] }]) {
        expect(admitted(policy, "host.test", [target.address])).toEqual([]);
      }
    }
    expect(isHostAddress("203.0.113.9", own)).toBe(false);
    expect(isHostAddress("64:ff9b::cb00:7109", own)).toBe(false);
  });

  it("a lookup answering in IPv6-mapped form is checked and returned as the IPv4 address", () => {
    for (const answer of ["::ffff:127.0.0.1", "::ffff:7f00:1", "0:0:0:0:0:ffff:c000:207", "::FFFF:192.0.2.7"]) {
      expect(admitted({ mode: "allow-all" }, "sneaky.test", [answer]), answer).toEqual([]);
    }
    expect(admitted({ allow: ["*", "127.0.0.1"] }, "sneaky.test", ["::ffff:127.0.0.1", "127.0.0.1"])).toEqual([
      "127.0.0.1",
    ]);
    expect(admitted({ mode: "allow-all" }, "x.test", ["::ffff:203.0.113.9"])).toEqual(["203.0.113.9"]);
  });

  it("naming an address in any spelling admits that address and no other host address", () => {
    for (const spelling of v4Spellings("127.0.0.1")) {
      const policy = { allow: ["*", spelling] };
      expect(admitted(policy, "127.0.0.1", ["127.0.0.1"]), spelling).toEqual(["127.0.0.1"]);
      for (const other of ["127.0.0.2", "0.0.0.0", "::1", "192.0.2.7", "::7f00:1", "fd00::2"]) {
        expect(admitted(policy, other, [other]), `${spelling} vs ${other}`).toEqual([]);
      }
    }
    for (const spelling of v4Spellings("192.0.2.7")) {
      expect(directDestinations(egressRules({ allow: [spelling] }), own), spelling).toEqual(["192.0.2.7"]);
    }
    expect(directDestinations(egressRules({ allow: [], subnets: { allow: ["::ffff:192.0.2.0/120"] } }), own)).toEqual([
      "192.0.2.7",
    ]);
  });

  it("subnets: an IPv6 rule never names IPv4 addresses, mapped rules are IPv4 rules, a malformed one names nothing", () => {
    expect(admitted({ allow: [], subnets: { allow: ["::/0"] } }, "127.0.0.1", ["127.0.0.1"])).toEqual([]);
    expect(admitted({ allow: [], subnets: { allow: ["::/0"] } }, "x.test", ["2001:db8::1"])).toEqual(["2001:db8::1"]);
    expect(admitted({ allow: [], subnets: { allow: ["::ffff:127.0.0.0/104"] } }, "x", ["127.0.0.9"])).toEqual([
      "127.0.0.9",
    ]);
    expect(admitted({ mode: "allow-all", subnets: { deny: ["::ffff:10.0.0.0/104"] } }, "x", ["10.1.2.3"])).toEqual([]);
    expect(admitted({ allow: [], subnets: { allow: ["10.0.0.1/"] } }, "x.test", ["127.0.0.1", "10.0.0.1"])).toEqual([]);
  });

  it("a *.suffix wildcard matches names only, never an address that ends the same way", () => {
    expect(admitted({ allow: ["*.2.7"] }, "203.0.2.7", ["203.0.2.7"])).toEqual([]);
    expect(admitted({ allow: ["*.example"] }, "a.EXAMPLE.", ["203.0.113.9"])).toEqual(["203.0.113.9"]);
  });
});

// A test host: an address of this machine that is not loopback, on a link into a namespace of the file's own.
const octet = randomInt(1, 250);
const namespace = `vsbsp${process.pid}`;
const hostEnd = `vs${process.pid}h`;
const testHost = `10.213.${octet}.1`;
const testHost6 = `fd42:213:${octet.toString(16)}::1`;

/** Servers that say who they are, and the paths each was asked for. */
const servers = new Map<string, { server: Server; port: number; seen: string[] }>();

async function serve(address: string): Promise<void> {
  const seen: string[] = [];
  const server = createServer((req, res) => {
    seen.push(req.url ?? "");
    res.end(`hello ${req.url} from ${address}`);
  });
  await new Promise<void>((resolve) => server.listen(0, address, resolve));
  servers.set(address, { server, port: (server.address() as AddressInfo).port, seen });
}

async function until(check: () => Promise<boolean>, what: string): Promise<void> {
  for (let i = 0; i < 100; i++) {
    if (await check()) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`timed out waiting for ${what}`);
}

const emulator = useEmulator();

beforeAll(async () => {
  execFileSync("ip", ["netns", "add", namespace]);
  execFileSync("ip", ["link", "add", hostEnd, "type", "veth", "peer", "name", `vs${process.pid}n`, "netns", namespace]);
  execFileSync("ip", ["addr", "add", `${testHost}/30`, "dev", hostEnd]);
  execFileSync("ip", ["-6", "addr", "add", `${testHost6}/64`, "dev", hostEnd, "nodad"]);
  execFileSync("ip", ["link", "set", hostEnd, "up"]);
  for (const address of ["127.0.0.1", "::1", testHost, testHost6]) await serve(address);
  // The proxy reads the host's addresses through a short cache: wait until it knows the test host's.
  await until(async () => {
    const own = await hostAddresses();
    return own.has(testHost) && own.has(testHost6);
  }, "the test host's addresses");
});

afterAll(async () => {
  for (const { server } of servers.values()) {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
  execFileSync("ip", ["netns", "del", namespace]);
});

/** Raw HTTP/1.0 over a TCP socket: the status and the body, or status 0 when the connection failed. */
function exchange(port: number, request: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve) => {
    let data = "";
    const socket = tcpConnect(port, "127.0.0.1", () => socket.write(request));
    socket.setTimeout(20_000, () => socket.destroy());
    socket.on("data", (chunk) => {
      data += chunk;
    });
    socket.on("error", () => {});
    socket.on("close", () => {
      const [head = "", ...body] = data.split("\r\n\r\n");
      resolve({ status: Number(head.split(" ")[1]) || 0, body: body.join("\r\n\r\n") });
    });
  });
}

describe("the proxy reads the host it is asked for, and what a name resolves to, canonically", () => {
  async function proxyWith(policy: Record<string, unknown>, lookup: (host: string) => Promise<LookupAddress[]>) {
    const listener = createTcpServer();
    await new Promise<void>((resolve) => listener.listen(0, "127.0.0.1", resolve));
    const proxy = serveEgressProxy(listener, () => policy, { lookup });
    return { port: (listener.address() as AddressInfo).port, close: () => proxy.close() };
  }
  const get = (authority: string, path: string) =>
    `GET http://${authority}${path} HTTP/1.0\r\nHost: ${authority}\r\n\r\n`;

  it("a name that resolves to a mapped host address is refused under allow-all, and the host is never contacted", async () => {
    const v4 = servers.get(testHost)!;
    const answers = ["::ffff:127.0.0.1", `::ffff:${testHost}`, "0:0:0:0:0:ffff:7f00:1"];
    const proxy = await proxyWith({ mode: "allow-all" }, async () =>
      answers.map((address) => ({ address, family: 6 })),
    );
    try {
      expect(await exchange(proxy.port, get(`sneaky.test:${v4.port}`, "/resolved"))).toMatchObject({ status: 403 });
      const tunnel = await exchange(proxy.port, `CONNECT sneaky.test:${v4.port} HTTP/1.1\r\n\r\n`);
      expect(tunnel.status).toBe(403);
      expect(v4.seen).not.toContain("/resolved");
    } finally {
      proxy.close();
    }
  });

  it("a name is resolved once, and the connection goes to the address that was checked (no rebinding)", async () => {
    // Same port as the loopback server, on another loopback address: the port alone cannot tell them apart.
    const port = servers.get("127.0.0.1")!.port;
    const checked: string[] = [];
    const rebind = createServer((req, res) => {
      checked.push(req.url ?? "");
      res.end("checked address");
    });
    await new Promise<void>((resolve) => rebind.listen(port, "127.0.0.2", resolve));
    let lookups = 0;
    // The first answer is named by the policy (mapped, as getaddrinfo may give it); later ones are not.
    const lookup = async () => [
      lookups++ === 0 ? { address: "::ffff:127.0.0.2", family: 6 } : { address: "127.0.0.1", family: 4 },
    ];
    const proxy = await proxyWith({ allow: ["rebind.test", "127.0.0.2"] }, lookup);
    try {
      expect(await exchange(proxy.port, get(`rebind.test:${port}`, "/rebind"))).toEqual({
        status: 200,
        body: "checked address",
      });
      expect(lookups).toBe(1);
      expect(checked).toEqual(["/rebind"]);
      expect(servers.get("127.0.0.1")!.seen).not.toContain("/rebind");
    } finally {
      proxy.close();
      await new Promise((resolve) => rebind.close(resolve));
    }
  });

  it("a host that is no valid address or name is a 400, for CONNECT and plain HTTP", async () => {
    const proxy = await proxyWith({ mode: "allow-all" }, async () => {
      throw new Error("no lookup expected");
    });
    try {
      for (const target of [
        "127.0.0.256:80",
        "[127.0.0.1]:80",
        "[::ffff:127.1]:80",
        "foo.123:80",
        "[fe80::1%a%b]:80",
      ]) {
        const answer = await exchange(proxy.port, `CONNECT ${target} HTTP/1.1\r\n\r\n`);
        expect(answer, target).toMatchObject({ status: 400, body: expect.stringContaining("is not a valid host") });
      }
      expect((await exchange(proxy.port, get("[::ffff:127.1]:80", "/"))).status).toBe(400);
    } finally {
      proxy.close();
    }
  });
});

/** Runs in the sandbox: sends each attempt to the session's proxy as raw bytes, prints status and body. */
const ATTEMPTS = `
const net = require("node:net");
const proxy = new URL(process.env.HTTP_PROXY);
const run = (a) => new Promise((resolve) => {
  const target = a.host + ":" + a.port;
  let data = "";
  let tunnelled = false;
  const socket = net.connect(Number(proxy.port), proxy.hostname);
  socket.setTimeout(25000, () => socket.destroy());
  socket.on("error", () => {});
  socket.on("data", (chunk) => {
    data += chunk;
    if (a.via === "connect" && !tunnelled && data.includes("\\r\\n\\r\\n")) {
      tunnelled = true;
      if (data.startsWith("HTTP/1.1 200 ")) {
        data = "";
        socket.write("GET " + a.path + " HTTP/1.0\\r\\n\\r\\n");
      }
    }
  });
  socket.on("close", () => {
    const [head, ...body] = data.split("\\r\\n\\r\\n");
    resolve({ status: Number(head.split(" ")[1]) || 0, body: body.join("\\r\\n\\r\\n") });
  });
  if (a.via === "connect") socket.write("CONNECT " + target + " HTTP/1.1\\r\\nHost: " + target + "\\r\\n\\r\\n");
  else if (a.via === "forward") socket.write("GET http://" + target + a.path + " HTTP/1.1\\r\\nHost: " + target + "\\r\\nConnection: close\\r\\n\\r\\n");
  else socket.write("GET " + a.path + " HTTP/1.1\\r\\nHost: " + target + "\\r\\nConnection: close\\r\\n\\r\\n");
});
(async () => {
  const results = [];
  for (const a of JSON.parse(process.argv[1])) results.push(await run(a));
  console.log(JSON.stringify(results));
})();
`;

interface Attempt {
  via: "forward" | "connect" | "host-header";
  host: string;
  port: number;
  path: string;
  server: string;
}

const bracketed = (spelling: string) =>
  spelling.includes(":") && !spelling.startsWith("[") ? `[${spelling}]` : spelling;

/** Every spelling of every server's address, through the proxy by plain HTTP and by CONNECT. */
function attempts(tag: string, spellingsOf: (address: string) => string[]): Attempt[] {
  const list: Attempt[] = [];
  for (const [address, { port }] of servers) {
    for (const spelling of spellingsOf(address)) {
      const host = bracketed(spelling);
      // WHATWG URL takes no zone id, so a zone only goes into CONNECT.
      const vias = host.includes("%") ? (["connect"] as const) : (["forward", "connect"] as const);
      for (const via of vias) list.push({ via, host, port, path: `/${tag}-${list.length}`, server: address });
    }
  }
  return list;
}

const spellingsOf = (address: string) => (address.includes(":") ? v6Spellings(address) : v4Spellings(address));

describe.each(SDKS)(
  "a sandbox reaches the host's addresses in no spelling unless named, with SDK %s",
  (version, { Sandbox }) => {
    type Box = Awaited<ReturnType<typeof Sandbox.create>>;
    async function tryAll(sandbox: Box, list: Attempt[]) {
      const done = await sandbox.runCommand({ cmd: "node", args: ["-e", ATTEMPTS, JSON.stringify(list)] });
      expect(await done.stderr()).toBe("");
      return JSON.parse(await done.stdout()) as Array<{ status: number; body: string }>;
    }
    const seenAnywhere = () => [...servers.values()].flatMap(({ seen }) => seen);

    it("allow-all refuses every spelling of loopback and of the host's interface addresses, by plain HTTP and CONNECT", async () => {
      const sandbox = await Sandbox.create({ ...connect(emulator()), networkPolicy: "allow-all" });
      const list = attempts(`${version}-open`, spellingsOf);
      const results = await tryAll(sandbox, list);
      expect(results.map((r, i) => `${list[i]!.via} ${list[i]!.host} ${r.status}`)).toEqual(
        list.map((a) => `${a.via} ${a.host} 403`),
      );
      expect(seenAnywhere().filter((path) => path.startsWith(`/${version}-open`))).toEqual([]);
      await sandbox.delete();
    });

    it("a policy naming the addresses admits every spelling of each (the control), and the Host header alone goes nowhere", async () => {
      const named = { allow: ["*", "127.0.0.1", "::1", testHost, testHost6] };
      const sandbox = await Sandbox.create({ ...connect(emulator()), networkPolicy: named });
      const list = attempts(`${version}-named`, spellingsOf);
      const results = await tryAll(sandbox, list);
      expect(results).toEqual(list.map((a) => ({ status: 200, body: `hello ${a.path} from ${a.server}` })));
      // Origin-form with only a Host header: the proxy takes absolute-form requests and CONNECT only.
      const port = servers.get(testHost)!.port;
      const viaHost = [{ via: "host-header", host: testHost, port, path: `/${version}-host-header`, server: testHost }];
      expect((await tryAll(sandbox, viaHost as Attempt[]))[0]!.status).toBe(400);
      expect(servers.get(testHost)!.seen).not.toContain(`/${version}-host-header`);
      await sandbox.delete();
    });

    it("IPv4-compatible, SIIT, NAT64 and 6to4 forms of a host address are refused, even when the IPv4 address is named", async () => {
      const embedded = (address: string) => {
        if (address.includes(":")) return [];
        const [a = 0, b = 0, c = 0, d = 0] = address.split(".").map(Number);
        const high = ((a << 8) | b).toString(16);
        const low = ((c << 8) | d).toString(16);
        return [
          `::${address}`,
          `::${high}:${low}`,
          `::ffff:0:${address}`,
          `64:ff9b::${address}`,
          `2002:${high}:${low}::1`,
        ];
      };
      const named = { allow: ["*", "127.0.0.1", testHost] };
      const sandbox = await Sandbox.create({ ...connect(emulator()), networkPolicy: named });
      const list = attempts(`${version}-embedded`, embedded);
      expect(list.length).toBe(20);
      const results = await tryAll(sandbox, list);
      expect(results.map((r) => r.status)).toEqual(list.map(() => 403));
      expect(seenAnywhere().filter((path) => path.startsWith(`/${version}-embedded`))).toEqual([]);
      await sandbox.delete();
    });
  },
);
