// The direct-egress link (egress-routes.ts) must lead to the addresses the policy names and nowhere else, even
// for a socket bound to the link itself (SO_BINDTODEVICE skips the sandbox's routes: the kernel then takes any
// destination as on the link, and the host answers for all of its addresses on any interface). The host end
// filters what arrives from the link (egress-filter.ts), outside the sandbox's reach, and the link goes away
// when the policy names no address any more. Two host addresses live on the host end of a veth pair this file
// creates into a network namespace of its own (removed afterwards); the policy names only the first. Policy
// entries name addresses, never ports, so the filter is by address alone.
import { execFileSync, spawnSync } from "node:child_process";
import { randomInt } from "node:crypto";
import { createServer, type Server } from "node:net";
import { Sandbox } from "@vercel/sandbox";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { filterTableName } from "../../src/emulator/egress-filter.js";
import { type LocalSandboxApi, startLocalSandboxApi } from "../../src/emulator/index.js";
import { hostAddresses } from "../../src/infra/index.js";
import { connect, raw } from "./harness.js";

const octet = randomInt(1, 250);
const namespace = `vsbfilter${process.pid}`;
const hostEnd = `vf${process.pid}h`;
const named = `10.218.${octet}.1`;
const other = `10.218.${octet}.2`;
const servers = new Map<string, { server: Server; port: number }>();
let api: LocalSandboxApi | undefined;
/** The pid of a process that has exited (and was reaped). */
const deadPid = spawnSync("true").pid!;

// A connect from inside the sandbox on a socket bound to the sandbox's one non-loopback interface: what the
// server answered, `refused:<error>` when nothing did within a second, or `no-link` without such an interface.
const BOUND_CONNECT = `
import socket, sys
links = [name for _, name in socket.if_nameindex() if name != "lo"]
if not links:
    print("no-link")
    sys.exit()
s = socket.socket()
s.setsockopt(socket.SOL_SOCKET, socket.SO_BINDTODEVICE, links[0].encode())
s.settimeout(1)
try:
    s.connect((sys.argv[1], int(sys.argv[2])))
    print("answered:" + s.recv(100).decode().strip())
except OSError as error:
    print("refused:" + type(error).__name__)
`;

async function serve(address: string): Promise<void> {
  const server = createServer((socket) => socket.end(`${address}\n`));
  await new Promise<void>((resolve) => server.listen(0, address, resolve));
  servers.set(address, { server, port: (server.address() as { port: number }).port });
}

/** Whether the host has the filter table of the emulator process `pid` (default: this process). */
const ownTable = (pid = process.pid) =>
  execFileSync("nft", ["list", "tables"], { encoding: "utf8" })
    .split("\n")
    .includes(`table inet ${filterTableName(pid)}`);

/** The host's interfaces (the host ends of direct links among them). */
const hostLinks = () =>
  execFileSync("ip", ["-o", "link"], { encoding: "utf8" })
    .trim()
    .split("\n")
    .map((line) => line.split(": ")[1]!.split("@")[0]!);

beforeAll(async () => {
  execFileSync("ip", ["netns", "add", namespace]);
  execFileSync("ip", ["link", "add", hostEnd, "type", "veth", "peer", "name", `vf${process.pid}n`, "netns", namespace]);
  execFileSync("ip", ["addr", "add", `${named}/32`, "dev", hostEnd]);
  execFileSync("ip", ["addr", "add", `${other}/32`, "dev", hostEnd]);
  execFileSync("ip", ["link", "set", hostEnd, "up"]);
  await serve(named);
  await serve(other);
  // The emulator reads the host's addresses through a short cache: wait until it knows the new ones.
  for (let i = 0; i < 100 && !(await hostAddresses()).has(named); i++) await new Promise((r) => setTimeout(r, 100));
  // Tables as an emulator that died (a pid that is gone) and a live one (this process's parent) would leave.
  execFileSync("nft", ["add", "table", "inet", filterTableName(deadPid)]);
  execFileSync("nft", ["add", "table", "inet", filterTableName(process.ppid)]);
  api = await startLocalSandboxApi();
});

afterAll(async () => {
  await api?.close();
  execFileSync("nft", ["delete", "table", "inet", filterTableName(process.ppid)]);
  for (const { server } of servers.values()) await new Promise((resolve) => server.close(resolve));
  execFileSync("ip", ["netns", "del", namespace]);
});

describe("the direct-egress link's host end", () => {
  type Box = Awaited<ReturnType<typeof Sandbox.create>>;
  const bound = async (sandbox: Box, address: string, sudo = false) => {
    const done = await sandbox.runCommand({
      cmd: "python3",
      args: ["-c", BOUND_CONNECT, address, String(servers.get(address)!.port)],
      sudo,
    });
    return (await done.stdout()).trim();
  };
  const links = async (sandbox: Box) =>
    (await (await sandbox.runCommand("ip", ["-o", "link"])).stdout())
      .trim()
      .split("\n")
      .map((line) => line.split(": ")[1]!.split("@")[0]);

  it("sweeps at its start the table an emulator that died left, never a live process's", () => {
    expect(ownTable(deadPid)).toBe(false);
    expect(ownTable(process.ppid)).toBe(true);
  });

  it("lets a socket bound to the link reach the named address only, for the user and for sandbox root", async () => {
    const sandbox = await Sandbox.create({ ...connect(api!), networkPolicy: { allow: [named] } });
    expect(await bound(sandbox, named)).toBe(`answered:${named}`);
    expect(await bound(sandbox, other)).toMatch(/^refused:/);
    expect(await bound(sandbox, named, true)).toBe(`answered:${named}`);
    expect(await bound(sandbox, other, true)).toMatch(/^refused:/);
    // The filter is the host's, outside the sandbox's network namespace: root inside cannot flush it.
    await sandbox.runCommand({ cmd: "nft", args: ["flush", "ruleset"], sudo: true });
    expect(await bound(sandbox, other, true)).toMatch(/^refused:/);
    await sandbox.delete();
  });

  it("removes the link when the policy names no address, and makes it again when one names an address", async () => {
    const sandbox = await Sandbox.create({ ...connect(api!), networkPolicy: { allow: [named] } });
    expect(await bound(sandbox, named)).toBe(`answered:${named}`);
    expect(await links(sandbox)).toHaveLength(2);
    await sandbox.updateNetworkPolicy("deny-all");
    expect(await bound(sandbox, named, true)).toBe("no-link");
    expect(await links(sandbox)).toEqual(["lo"]);
    await sandbox.updateNetworkPolicy({ allow: [named] });
    expect(await links(sandbox)).toHaveLength(2);
    expect(await bound(sandbox, named)).toBe(`answered:${named}`);
    expect(await bound(sandbox, other)).toMatch(/^refused:/);
    for (const policy of ["allow-all", { allow: ["example.invalid"] }] as const) {
      await sandbox.updateNetworkPolicy(policy as never);
      expect(await links(sandbox)).toEqual(["lo"]);
    }
    await sandbox.delete();
  });

  it("fails an update whose filter the host refuses and removes the link, then makes a filtered one again", async () => {
    const sandbox = await Sandbox.create({ ...connect(api!), networkPolicy: { allow: [named] } });
    expect(await bound(sandbox, named)).toBe(`answered:${named}`);
    const ours = () => hostLinks().filter((name) => name.startsWith(`v${process.pid.toString(36)}x`));
    expect(ours()).toHaveLength(1);
    // Someone removes the table from outside: the next change of the filter cannot apply.
    execFileSync("nft", ["delete", "table", "inet", filterTableName(process.pid)]);
    // Raw, as the SDK would retry a 500 (and the retry succeed: see below).
    const sid = sandbox.currentSession().sessionId;
    const body = JSON.stringify({ allow: [named, other] });
    const refused = await raw(api!, "POST", `/v2/sandboxes/sessions/${sid}/network-policy`, body);
    expect(refused.status).toBe(500);
    expect(refused.json.error?.message).toMatch(/nft refused the direct-egress filter/);
    expect(ours()).toEqual([]);
    // The next command makes the link again, with its filter.
    expect(await bound(sandbox, other)).toBe(`answered:${other}`);
    expect(ownTable()).toBe(true);
    await sandbox.updateNetworkPolicy({ allow: [named] });
    expect(await bound(sandbox, other)).toMatch(/^refused:/);
    await sandbox.delete();
  });

  it("leaves no table of the emulator's behind once the emulator stops", async () => {
    const sandbox = await Sandbox.create({ ...connect(api!), networkPolicy: { allow: [named] } });
    expect(await bound(sandbox, named)).toBe(`answered:${named}`);
    expect(ownTable()).toBe(true);
    await api!.close();
    api = undefined;
    expect(ownTable()).toBe(false);
  });
});
