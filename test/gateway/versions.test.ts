// Every 2026.9.x between the pinned 2026.9.2 and the newest release (those two run the full enrollment and
// worker-turn specs), but the Codex spec's release, which runs the same smoke on its own gateway
// (codex-remote-exec.test.ts): the packed plugin installs into that gateway, loads, and yields a worker, that is,
// `environments.create` on a `vercel-sandbox` profile becomes ready with a real node on the emulated VM2, and
// destroy leaves no sandbox. One gateway per release, one after another.
import { afterAll, describe, it } from "vitest";
import { CODEX_GATEWAY_VERSION } from "./codex/codex-gateway.js";
import { BETWEEN_VERSIONS } from "./versions.js";
import { WorkerGateway } from "./worker-gateway.js";

const table: Record<string, Record<string, number | string>> = {};

afterAll(() => {
  process.stderr.write(`[versions] ${JSON.stringify(table)}\n`);
});

describe.each(BETWEEN_VERSIONS.filter((v) => v !== CODEX_GATEWAY_VERSION))("openclaw %s", (version) => {
  const worker = new WorkerGateway(version);

  afterAll(() => worker.dispose(), 180_000);

  it("installs the plugin, yields a ready worker, and destroy leaves no sandbox", { timeout: 1_200_000 }, async () => {
    await worker.start();
    table[version] = await worker.smoke();
  });
});
