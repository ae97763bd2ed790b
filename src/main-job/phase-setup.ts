// The main job's first phases: this machine's services (the emulator on the rerun cache's store when one is in
// use), the run's secrets, the counters over the emulator, the teardown's deletion of what the run made, and the
// packed plugin. What it returns is the job's context before VM1 exists.
import { Sandbox, Snapshot } from "@vercel/sandbox";
import { registerSecret } from "../infra/index.js";
import { frontOf } from "./base-reuse.js";
import { hex, type JobSetup, type JobStart } from "./context.js";
import { packPlugin } from "./package.js";
import { keptSnapshots, type ReuseRecord } from "./reuse.js";
import { startServices } from "./services.js";

const CREATE = /^\/v[23]\/sandboxes\/?$/;

export async function setUpJob(start: JobStart): Promise<JobSetup> {
  const { options, progress, teardown, tmp, cache } = start;
  const store = cache && {
    dataDir: cache.emulatorDir,
    restore: keptSnapshots(cache.record, cache.fresh),
    ...(cache.record?.front && !cache.fresh ? { front: cache.record.front } : {}),
  };
  const services = await progress.phase("Start the emulator and this machine's services", () =>
    startServices(teardown, tmp, store),
  );
  const { api, connection } = services;
  progress.note(`Vercel API (emulator) ${api.url}, reached from VM1 as ${services.front.url}`);
  progress.note(`scripted model ${services.model.baseUrl} (refuses requests without its key; VM1's firewall adds it)`);
  const secrets = { gatewayToken: hex(), vercelToken: api.credentials.token, notifySecret: hex() };
  // Redacted from every line the job prints (a gateway log tail included).
  for (const secret of Object.values(secrets)) registerSecret(secret);
  const creates = () =>
    api.requests().filter((r) => r.method === "POST" && CREATE.test(r.path) && r.status < 300).length;
  const sandboxes = async () => (await Sandbox.list({ ...connection })).toArray();
  const snapshots = async () =>
    (await (await Snapshot.list({ ...connection } as Parameters<typeof Snapshot.list>[0])).toArray()).filter(
      (s) => s.status !== "deleted",
    );
  // What the next run finds in the cache: this run's VM1 image, API front and base images (saved as they are made).
  const next: ReuseRecord = { format: 1, front: frontOf(services.front.url) };
  // The rerun cache's images outlive the run; every other snapshot and every sandbox goes. Kept: what this run
  // recorded for the next one and, until its end replaces the record whole, what the last run kept, so a failed
  // or interrupted run (the teardown's deleteAll) leaves the cache it found (a layer it replaced goes at the
  // next run's start, which loads only what the record names).
  let lastRunKept: readonly string[] = services.api.restored;
  const cached = () => new Set([...lastRunKept, ...keptSnapshots(next, false)]);
  const deleteAll = async () => {
    const keep = cached();
    for (const s of await sandboxes()) await (await Sandbox.get({ ...connection, name: s.name })).delete();
    for (const s of await snapshots()) {
      if (!keep.has(s.id)) await (await Snapshot.get({ ...connection, snapshotId: s.id })).delete();
    }
  };
  // On Vercel these would outlive the job; the emulator ends them with its close anyway.
  teardown.add("delete every sandbox and snapshot", () => (options.keep ? Promise.resolve() : deleteAll()));

  const plugin = await progress.phase("Pack this checkout's plugin (npm pack)", () => packPlugin(tmp));
  progress.note(`${plugin.fileName}, ${Math.round(plugin.bytes.length / 1024)} KiB`);
  return {
    ...start,
    services,
    secrets,
    plugin,
    next,
    creates,
    sandboxes,
    snapshots,
    cached,
    deleteAll,
    lastRunKeptReplaced: () => {
      lastRunKept = [];
    },
  };
}
