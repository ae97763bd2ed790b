// This machine's side of the topology, started in order and registered for teardown as each starts: the host
// address VM1 may reach, the emulator ("Vercel"), the TLS front VM1 calls it through, the scripted model, and
// the route-aware dispatcher that lets this process reach `*.vercel.run` like a machine on the internet.
import path from "node:path";
import type { LocalSandboxApi } from "../emulator/index.js";
import { startLocalSandboxApi } from "../emulator/index.js";
import type { VmConnection } from "../host/index.js";
import { type ApiFront, startApiFront } from "./api-front.js";
import { addHostAddress } from "./host-address.js";
import { type ScriptedModel, startScriptedModel } from "./model.js";
import { resolveRoutesLocally } from "./routes.js";
import type { Teardown } from "./teardown.js";

export interface Services {
  address: string;
  api: LocalSandboxApi;
  front: ApiFront;
  model: ScriptedModel;
  connection: VmConnection;
}

/** Where the emulator keeps sandboxes and snapshots: in the job's dir (removed with it), so the job can read VM1's. */
export const emulatorDataDir = (jobDir: string) => path.join(jobDir, "emulator");

export async function startServices(teardown: Teardown, jobDir: string): Promise<Services> {
  const host = await addHostAddress();
  teardown.add("remove the host address", () => host.remove());
  const api = await startLocalSandboxApi({ dataDir: emulatorDataDir(jobDir) });
  teardown.add("close the emulator (ends every sandbox process)", () => api.close());
  const front = await startApiFront(host.address, api.url, jobDir);
  teardown.add("close the API front", () => front.close());
  const model = await startScriptedModel(host.address);
  teardown.add("stop the scripted model", () => model.close());
  const restore = await resolveRoutesLocally(api.routes);
  teardown.add("restore the dispatcher", restore);
  return { address: host.address, api, front, model, connection: { ...api.credentials, fetch: api.fetch } };
}
