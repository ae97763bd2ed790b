// The one host address VM1 may reach: on Vercel, VM1 talks to the Vercel API and to the host over the internet;
// here those services run on this machine, and a sandbox reaches a host address only when its network policy
// names it (the emulator then routes it over a veth link). Loopback cannot be routed from another namespace, so
// the job adds a private address of its own on a veth pair it creates (named after this process, removed at
// teardown; the kernel has no dummy links here),
// and binds only the services VM1 must reach to it: the API front and the host on one address, the scripted
// model on a second one of its own. The firewall's request rules are per host, so the model's own address lets
// VM1's policy carry a rule for the model alone (its key added on the way out) while the API front's TLS and
// the host's traffic pass untouched, as a model at its own domain would on Vercel.
import { execFile } from "node:child_process";
import { randomInt } from "node:crypto";
import { promisify } from "node:util";
import { hostAddresses, isAlive } from "../infra/index.js";

const run = promisify(execFile);

export interface HostAddress {
  /** An IPv4 address of this host that nothing outside the machine routes to (the API front, the host). */
  address: string;
  /** A second such address, for the scripted model alone. */
  modelAddress: string;
  link: string;
  remove(): Promise<void>;
}

/** Links a previous run left behind when it was killed before its teardown: their process is gone. */
async function removeStaleLinks(): Promise<void> {
  const { stdout } = await run("ip", ["-o", "link", "show", "type", "veth"]);
  for (const match of stdout.matchAll(/^\d+: (vsbjob-([0-9a-z]+))@/gm)) {
    const pid = Number.parseInt(match[2]!, 36);
    if (!isAlive(pid)) await run("ip", ["link", "del", match[1]!]).catch(() => undefined);
  }
}

/**
 * `preferred`: the API front's address of the last run (the rerun cache), used when no link of this host holds
 * it, so VM1's `apiUrl` (part of the warm images' profile key) stays the same between runs.
 */
export async function addHostAddress(preferred?: string): Promise<HostAddress> {
  await removeStaleLinks();
  const link = `vsbjob-${process.pid.toString(36)}`;
  const taken = new Set(await hostAddresses());
  const pick = () => {
    let address = "";
    do address = `10.215.${randomInt(1, 255)}.${randomInt(1, 255)}`;
    while (taken.has(address));
    taken.add(address);
    return address;
  };
  const reuse = preferred && /^10\.215\.\d{1,3}\.\d{1,3}$/.test(preferred) && !taken.has(preferred);
  if (reuse) taken.add(preferred);
  const [address, modelAddress] = [reuse ? preferred : pick(), pick()];
  await run("ip", ["link", "add", link, "type", "veth", "peer", "name", `${link}-p`]);
  try {
    for (const a of [address, modelAddress]) await run("ip", ["addr", "add", `${a}/32`, "dev", link]);
    await run("ip", ["link", "set", link, "up"]);
    await run("ip", ["link", "set", `${link}-p`, "up"]);
  } catch (error) {
    await run("ip", ["link", "del", link]).catch(() => undefined);
    throw error;
  }
  return { address, modelAddress, link, remove: () => run("ip", ["link", "del", link]).then(() => undefined) };
}
