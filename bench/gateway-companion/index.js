// Bench only, never shipped: a companion plugin the bench links into a real gateway beside the installed
// vercel-sandbox plugin, so the memory figure is taken inside a real gateway process. Its one gateway method
// imports the installed plugin's provider module (the path the bench found in the gateway's state dir; its
// `openclaw` peer is the gateway's own copy), runs lib/lease-memory.mjs against the bench's emulator with the
// stand-in enrollment and a durable lease ledger of its own, and answers with the figures. The leases are this
// instance's, not core's: core tracks a lease only through environments.create, which needs a real node.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import { definePluginEntry } from "openclaw/plugin-sdk/plugin-entry";
import { leaseMemory } from "../lib/lease-memory.mjs";
import { standInEnroller } from "../lib/stand-in.mjs";

const METHOD = "vsbBenchCompanion.leaseMemory";

/** The gateway runs without --expose-gc: the flag set now makes `gc` available to a fresh context. */
function collector() {
  setFlagsFromString("--expose-gc");
  return runInNewContext("gc");
}

async function measure(api, { providerModule, profile, leases }) {
  const { createVercelSandboxProvider } = await import(pathToFileURL(providerModule).href);
  const stateDir = mkdtempSync(join(tmpdir(), "vsb-bench-companion-"));
  const provider = createVercelSandboxProvider({
    env: { [profile.tokenEnv]: process.env[profile.tokenEnv] },
    logger: api.logger,
    scope: "bench-gateway-memory",
    stateDir,
    enroll: standInEnroller,
  });
  try {
    return { pid: process.pid, ...(await leaseMemory(provider, profile, leases, collector())) };
  } finally {
    await provider.dispose();
    rmSync(stateDir, { recursive: true, force: true });
  }
}

export default definePluginEntry({
  id: "vsb-bench-companion",
  name: "vercel-sandbox bench companion",
  description: "Bench only: measures the installed vercel-sandbox plugin's lease memory inside this gateway",
  register(api) {
    api.registerGatewayMethod(
      METHOD,
      async ({ params, respond }) => {
        try {
          respond(true, await measure(api, params));
        } catch (error) {
          respond(false, undefined, { code: "UNAVAILABLE", message: String(error?.message ?? error) });
        }
      },
      { scope: "operator.admin", profileAccess: "independent" },
    );
  },
});
