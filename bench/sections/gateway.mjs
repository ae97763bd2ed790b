// The figures taken on a real gateway: the packed plugin installed into the pinned openclaw gateway as a user
// installs it (isolated state, token auth on loopback, the specs' GatewayHarness), with its `suspend` block, and
// the bench's companion plugin (bench/gateway-companion/) linked beside it. Memory: the companion runs the
// installed plugin's provider inside the gateway process with `leases` tracked leases against the bench's
// emulator (its token only in the gateway's environment). Suspend: POST /suspend → ready cycles.
import { globSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { profileOf, TOKEN_ENV } from "../lib/provider.mjs";
import { gatewayHarness } from "../lib/specs.mjs";
import { SUSPEND, suspendCycles } from "./suspend.mjs";

const COMPANION = fileURLToPath(new URL("../gateway-companion/", import.meta.url));
const METHOD = "vsbBenchCompanion.leaseMemory";

/** The provider module of the plugin `plugins install` put into the gateway's state dir. */
function installedProviderModule(stateDir) {
  const found = globSync("**/node_modules/openclaw-vercel-sandbox/dist/provider/index.js", { cwd: stateDir });
  if (found.length !== 1) throw new Error(`expected one installed vercel-sandbox plugin, found ${found.length}`);
  return join(stateDir, found[0]);
}

async function memoryInGateway(harness, api, leases) {
  const params = { providerModule: installedProviderModule(harness.stateDir), profile: profileOf(api), leases };
  const figures = await harness.callOk(METHOD, params, 600_000);
  if (figures.pid !== harness.gatewayPid) throw new Error(`measured in pid ${figures.pid}, not the gateway's`);
  return {
    where:
      "inside a real openclaw 2026.9.2 gateway process (its plugin installed from npm pack): the installed " +
      "plugin's provider, loaded by the bench's companion plugin, tracking its leases (keepalive armed, durable " +
      "ledger) with the stand-in enroller; these leases are the provider's, not core's (see Not built)",
    ...figures,
    heapPerLeaseBytes: Math.round(figures.heapGrowthBytes / figures.leases),
  };
}

export async function onRealGateway(api, { leases, suspendRuns }) {
  const { GatewayHarness } = await gatewayHarness();
  const harness = await GatewayHarness.create();
  try {
    await harness.installPlugin(await harness.packPlugin());
    await harness.ocOk(["plugins", "install", "-l", COMPANION, "--force", "--accept-capabilities"], {
      timeoutMs: 240_000,
    });
    await harness.patchConfig({ plugins: { entries: { "vercel-sandbox": { config: { suspend: SUSPEND } } } } });
    const token = api.credentials.token;
    await harness.startGateway({ env: { [TOKEN_ENV]: token }, secrets: [token] });
    const memory = await memoryInGateway(harness, api, leases);
    const suspend = await suspendCycles(harness, suspendRuns);
    return { memory, suspend };
  } finally {
    await harness.dispose();
  }
}
