// This machine's side of the topology, started in order and registered for teardown as each starts: the host
// addresses VM1 may reach, the emulator ("Vercel"), the TLS front VM1 calls it through, the scripted model (on
// its own address, refusing any request without its random API key, which only the firewall adds: VM1 never
// holds it), and the route-aware dispatcher that lets this process reach `*.vercel.run` like a machine on the
// internet.
import { randomBytes } from "node:crypto";
import path from "node:path";
import type { LocalSandboxApi } from "../emulator/index.js";
import { startLocalSandboxApi } from "../emulator/index.js";
import type { VmConnection } from "../host/index.js";
import { registerSecret } from "../infra/index.js";
import { type ApiFront, startApiFront } from "./api-front.js";
import { addHostAddress } from "./host-address.js";
import { type ScriptedModel, startScriptedModel } from "./model.js";
import { resolveRoutesLocally } from "./routes.js";
import type { Teardown } from "./teardown.js";

export interface Services {
  /** Where the API front and the host answer. */
  address: string;
  /** Where the scripted model answers (its own address: the firewall's rules are per host). */
  modelAddress: string;
  api: LocalSandboxApi;
  front: ApiFront;
  model: ScriptedModel;
  /** The model's API key: a secret in this process only (registered for redaction), added by VM1's firewall. */
  modelKey: string;
  connection: VmConnection;
  /** The emulator's data dir (the job's, or the rerun cache's). */
  dataDir: string;
}

/** Where the emulator keeps its state when the rerun cache is in use, and the snapshots to load from it. */
export interface EmulatorStore {
  dataDir: string;
  restore: string[];
  /** The last run's API front (address and port), kept when free so VM1's apiUrl is the same. */
  front?: { address: string; port: number };
}

/** Where the emulator keeps sandboxes and snapshots: in the job's dir (removed with it), so the job can read VM1's. */
export const emulatorDataDir = (jobDir: string) => path.join(jobDir, "emulator");

export async function startServices(teardown: Teardown, jobDir: string, store?: EmulatorStore): Promise<Services> {
  const host = await addHostAddress(store?.front?.address);
  teardown.add("remove the host address", () => host.remove());
  const dataDir = store?.dataDir ?? emulatorDataDir(jobDir);
  const api = await startLocalSandboxApi({ dataDir, ...(store ? { restoreSnapshots: store.restore } : {}) });
  teardown.add("close the emulator (ends every sandbox process)", () => api.close());
  const front = await startApiFront(host.address, api.url, jobDir, store?.front?.port ?? 0);
  teardown.add("close the API front", () => front.close());
  const modelKey = `sk-model-${randomBytes(24).toString("hex")}`;
  registerSecret(modelKey);
  const model = await startScriptedModel(host.modelAddress, { apiKey: modelKey });
  teardown.add("stop the scripted model", () => model.close());
  const restore = await resolveRoutesLocally(api.routes);
  teardown.add("restore the dispatcher", restore);
  const connection = { ...api.credentials, fetch: api.fetch };
  return { address: host.address, modelAddress: host.modelAddress, api, front, model, modelKey, connection, dataDir };
}
