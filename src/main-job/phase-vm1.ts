// VM1 the way a user builds it (or from VM1's image when the rerun cache has one): the sandbox, its host, openclaw
// and the plugin, the job's config, and the gateway started. Returns what completes the job's context.
import { Sandbox } from "@vercel/sandbox";
import { seededStore } from "./base-reuse.js";
import { approverLine, installCodex } from "./codex.js";
import { hex, type JobContext, type JobSetup } from "./context.js";
import { JobHost } from "./host.js";
import type { ImageReuse } from "./phase-image-reuse.js";
import { pollUntil } from "./poll.js";
import { baseConfig, GATEWAY_PORT, gatewayVersionFor, jobConfigPatch, vm1NetworkPolicy } from "./topology.js";
import * as vm1 from "./vm1.js";
import { VM1_LOG_FILE, VM1_RUNTIME } from "./vm1-image.js";

export async function buildVm1(
  job: JobSetup,
  { image, basePlan }: ImageReuse,
): Promise<Pick<JobContext, "box" | "host" | "publicOrigin">> {
  const { progress, services, secrets, plugin, timers, teardown, mode } = job;
  const fromImage = image?.snapshotId;
  const seedStore = basePlan && "offer" in basePlan ? seededStore(basePlan.offer) : undefined;
  const { connection, address } = services;
  const networkPolicy = vm1NetworkPolicy({
    hostAddress: address,
    modelBaseUrl: services.model.baseUrl,
    modelKey: services.modelKey,
  });
  const source = fromImage ? { source: { type: "snapshot", snapshotId: fromImage } } : { runtime: VM1_RUNTIME };
  const box = await progress.phase(
    fromImage ? "VM1: create the sandbox from VM1's image" : "VM1: create the sandbox",
    () =>
      Sandbox.create({
        ...connection,
        name: `vm1-${hex(3)}`,
        ...source,
        ports: [GATEWAY_PORT],
        timeout: 45 * 60_000,
        // The registry, the host address where "Vercel" and the host answer, and the model's own address, whose
        // rule adds the model's key on the way out (set again at every wake).
        networkPolicy,
      } as Parameters<typeof Sandbox.create>[0]),
  );
  const publicOrigin = box.domain(GATEWAY_PORT);
  progress.note(`${box.name}; its gateway port is exposed at ${publicOrigin}`);
  const host = new JobHost({
    address,
    connection,
    vmName: box.name,
    port: GATEWAY_PORT,
    publicOrigin,
    secrets,
    networkPolicy,
    ...(mode === "codex" ? { prelude: approverLine(GATEWAY_PORT), via: "chat-send" as const } : {}),
  });
  await host.start();
  teardown.add("stop the host", () => host.close());
  const logFile = VM1_LOG_FILE;
  const version = gatewayVersionFor(mode);
  if (!fromImage) {
    await progress.phase(`VM1: npm install openclaw@${version} from the npm registry`, () =>
      vm1.installOpenClaw(box, services.front.caPem, version),
    );
  }
  const configure = fromImage
    ? "VM1: this run's API CA and origin; profile, model, idle clock"
    : "VM1: openclaw plugins install npm-pack:<tarball>; profile, model, idle clock";
  await progress.phase(configure, async () => {
    if (fromImage) {
      await vm1.trustApiFront(box, services.front.caPem);
    } else {
      await vm1.writeConfig(box, baseConfig({ port: GATEWAY_PORT, publicOrigin, logFile }));
      await vm1.installPlugin(box, plugin.bytes, plugin.fileName);
      if (mode === "codex") await installCodex(box);
    }
    const { teamId, projectId } = services.api.credentials;
    const input = {
      port: GATEWAY_PORT,
      publicOrigin,
      modelBaseUrl: services.model.baseUrl,
      apiUrl: services.front.url,
    };
    const patch = jobConfigPatch({ ...input, teamId, projectId, notifyUrl: host.notifyUrl, timers, logFile, mode });
    // The image's config names its builder's origin: this VM1's replaces it.
    await vm1.patchConfig(box, fromImage ? { ...patch, gateway: { ...patch.gateway, publicOrigin } } : patch);
    // The last run's base runtime images: the plugin reads its store at start and uses one only if its key matches.
    if (seedStore) await box.writeFiles([{ path: vm1.IMAGE_STORE, content: Buffer.from(seedStore) }]);
    await vm1.createSampleRepo(box);
  });
  await progress.phase("VM1: start the gateway", async () => {
    const prelude = mode === "codex" ? approverLine(GATEWAY_PORT) : "";
    await box.runCommand({ ...vm1.gatewayStart(GATEWAY_PORT, secrets, prelude), detached: true });
    await pollUntil("the gateway on VM1 to be ready", () => host.ready(), 180_000);
  });
  return { box, host, publicOrigin };
}
