// The world of the warm-preparation specs, apart from fixtures.ts so that the bench, which imports fixtures.ts
// outside vitest, never loads the emulator's TypeScript sources through it.
import { packFixture } from "../provider/fixtures/artifact.js";
import { startHarness } from "../provider/fixtures/enrollment-harness.js";
import { loadCorePreparation, workerArchive } from "./fixtures.js";

/** The enrollment harness with what a warm preparation also needs: a runtime, a worker archive, core's preparation. */
export async function startWarmHarness() {
  const h = await startHarness();
  const runtime = packFixture("2026.9.2");
  const worker = workerArchive();
  h.gateway.serve(runtime);
  h.gateway.serve(worker);
  return { h, runtime, worker, core: await loadCorePreparation() };
}
