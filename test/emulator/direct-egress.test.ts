// Transparent egress to the host's own addresses: a client that ignores proxy variables (a raw socket, as
// the OpenClaw node's WebSocket is) reaches an address of the host only when the policy names it. The
// server runs on a test host this file creates (a veth pair into a network namespace of its own, removed
// afterwards); no traffic goes anywhere else.
import { execFileSync } from "node:child_process";
import { randomInt } from "node:crypto";
import { createServer, type Server } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { connect, SDKS, useEmulator } from "./harness.js";

const emulator = useEmulator();
const octet = randomInt(1, 250);
const namespace = `vsbtest${process.pid}`;
const hostEnd = `vt${process.pid}h`;
const testHost = `10.214.${octet}.1`;
let server: Server;
let port: number;

beforeAll(async () => {
  execFileSync("ip", ["netns", "add", namespace]);
  execFileSync("ip", ["link", "add", hostEnd, "type", "veth", "peer", "name", `vt${process.pid}n`, "netns", namespace]);
  execFileSync("ip", ["addr", "add", `${testHost}/30`, "dev", hostEnd]);
  execFileSync("ip", ["link", "set", hostEnd, "up"]);
  server = createServer((socket) => socket.end("hello from the test host\n"));
  await new Promise<void>((resolve) => server.listen(0, testHost, resolve));
  port = (server.address() as { port: number }).port;
});

afterAll(async () => {
  await new Promise((resolve) => server?.close(resolve));
  execFileSync("ip", ["netns", "del", namespace]);
});

describe.each(SDKS)("direct egress with SDK %s", (_version, { Sandbox }) => {
  type Box = Awaited<ReturnType<typeof Sandbox.create>>;
  const raw = async (sandbox: Box) => {
    const probe = `exec 3<>/dev/tcp/${testHost}/${port} && head -1 <&3 || echo blocked`;
    const done = await sandbox.runCommand({ cmd: "bash", args: ["-c", probe], env: {} });
    return (await done.stdout()).trim();
  };

  it("a raw socket reaches a host address the policy names, and only while it names it", async () => {
    const sandbox = await Sandbox.create({ ...connect(emulator()), networkPolicy: { allow: [testHost] } });
    expect(await raw(sandbox)).toBe("hello from the test host");
    const routes = await sandbox.runCommand("ip", ["-4", "route"]);
    expect((await routes.stdout()).trim().split("\n")).toEqual([
      expect.stringMatching(new RegExp(`^${testHost} dev `)),
    ]);
    await sandbox.updateNetworkPolicy({ allow: ["example.invalid"] });
    expect(await raw(sandbox)).toBe("blocked");
    await sandbox.updateNetworkPolicy({ allow: [], subnets: { allow: [`10.214.${octet}.0/30`] } });
    expect(await raw(sandbox)).toBe("hello from the test host");
    await sandbox.updateNetworkPolicy({ allow: [testHost], subnets: { deny: ["10.214.0.0/16"] } });
    expect(await raw(sandbox)).toBe("blocked");
    await sandbox.delete();
  });

  it("the policy may name the address in any spelling: the route is to the one address, and only to it", async () => {
    const hex = (testHost.split(".").map(Number) as [number, number, number, number]).reduce((n, o) => n * 256 + o, 0);
    const sandbox = await Sandbox.create({
      ...connect(emulator()),
      networkPolicy: { allow: [`[::FFFF:${testHost}]`] },
    });
    const routes = async () => (await (await sandbox.runCommand("ip", ["-4", "route"])).stdout()).trim();
    expect(await raw(sandbox)).toBe("hello from the test host");
    expect(await routes()).toMatch(new RegExp(`^${testHost} dev [^\\n]+$`));
    await sandbox.updateNetworkPolicy({ allow: [`0x${hex.toString(16)}`] });
    expect(await raw(sandbox)).toBe("hello from the test host");
    await sandbox.updateNetworkPolicy({ allow: [], subnets: { allow: [`::ffff:10.214.${octet}.0/126`] } });
    expect(await raw(sandbox)).toBe("hello from the test host");
    await sandbox.updateNetworkPolicy({ allow: [`::ffff:10.214.${octet}.2`] });
    expect(await raw(sandbox)).toBe("blocked");
    expect(await routes()).toBe("");
    await sandbox.delete();
  });

  it("an address whose entry has request rules gets no direct path: its traffic must pass the rules", async () => {
    const sandbox = await Sandbox.create({ ...connect(emulator()), networkPolicy: { allow: [testHost] } });
    expect(await raw(sandbox)).toBe("hello from the test host");
    const rules = [{ transform: [{ headers: { authorization: "Bearer direct-route-spec-value" } }] }];
    await sandbox.updateNetworkPolicy({ allow: { [testHost]: rules } });
    expect(await raw(sandbox)).toBe("blocked");
    expect((await (await sandbox.runCommand("ip", ["-4", "route"])).stdout()).trim()).toBe("");
    await sandbox.delete();
  });

  it("allow-all, * and deny-all never open a direct path to the host", async () => {
    const sandbox = await Sandbox.create(connect(emulator()));
    expect(await raw(sandbox)).toBe("blocked");
    for (const policy of [{ allow: ["*"] }, "deny-all"] as const) {
      await sandbox.updateNetworkPolicy(policy as never);
      expect(await raw(sandbox)).toBe("blocked");
    }
    await sandbox.delete();
  });
});
