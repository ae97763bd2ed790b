// The host's own addresses, as the kernel sees them: every address assigned to any interface, whatever the
// link's state (the kernel accepts packets for a local address on any interface, so a down or
// carrier-less link still counts; Node's networkInterfaces() would skip it). Read from `ip -o addr`,
// canonical (ip-literal.ts) so the egress checks compare like with like, and cached briefly, since the
// egress proxy asks on every connection.
import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { ipLiteral } from "./ip-literal.js";

const run = promisify(execFile);
const TTL_MS = 1000;
let cached: { at: number; addresses: Promise<Set<string>> } | undefined;

async function read(): Promise<Set<string>> {
  const { stdout } = await run("ip", ["-o", "addr", "show"]);
  const addresses = new Set<string>();
  for (const line of stdout.split("\n")) {
    const address = ipLiteral(/\binet6? ([0-9a-fA-F:.]+)\//.exec(line)?.[1] ?? "");
    if (address) addresses.add(address.address);
  }
  return addresses;
}

export function hostAddresses(): Promise<Set<string>> {
  if (!cached || Date.now() - cached.at > TTL_MS) {
    const addresses = read();
    cached = { at: Date.now(), addresses };
    addresses.catch(() => {
      if (cached?.addresses === addresses) cached = undefined;
    });
  }
  return cached.addresses;
}
