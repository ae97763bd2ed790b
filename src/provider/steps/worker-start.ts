// Step 4b: the recipe's post-binding phases (seed 002: postCreateCommand, then postStartCommand), once per
// worker, after enrollment and before the lease is handed to core, so before the first turn. OpenClaw
// 2026.9.2 offers an external provider no hook at session-workspace binding, so they run in the prepared
// checkout; they never enter an image (capture happened before enrollment). A failure is the recipe's:
// a visible dispatch error once the sandbox is released.
import { planPhases } from "../../devcontainer/index.js";
import { DeclaredPreparationError, type PrepareOutcome, runPhases } from "../../preparation/index.js";
import type { SandboxHandle } from "../../vercel/index.js";
import type { ProvisionRun } from "./run.js";

export async function startWorker(run: ProvisionRun, sandbox: SandboxHandle, prepared: PrepareOutcome) {
  const phases = planPhases(prepared.recipe, "worker-start");
  if (phases.length === 0) return;
  const box = run.project.box(sandbox);
  const ran = await runPhases(phases, prepared.recipe, { box, cwd: prepared.checkout, signal: run.options.signal });
  if (ran.failed) throw DeclaredPreparationError.of(ran.failed);
}
