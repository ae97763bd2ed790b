// Progress on long work (issue 21): each phase of a provision (allocate, create or adopt, preparation with its
// runtime install and captures, enrollment, worker start) is logged as it starts and with its duration as it
// ends, so a slow first worker is never a silent minute. Preparation's own steps (runtime install, base image
// capture, seed, recipe, project image capture) are logged from inside it the same way (warm-images.ts).
import type { StepContext } from "./run.js";

export type ProvisionPhase = "allocate" | "create or adopt" | "preparation" | "enrollment" | "worker start";

export async function phase<T>(
  context: Pick<StepContext, "logger">,
  leaseId: string,
  name: ProvisionPhase,
  work: () => Promise<T>,
): Promise<T> {
  const started = Date.now();
  context.logger.info?.(`vercel-sandbox ${leaseId}: phase ${name} started`);
  try {
    const out = await work();
    context.logger.info?.(`vercel-sandbox ${leaseId}: phase ${name} done in ${Date.now() - started} ms`);
    return out;
  } catch (error) {
    context.logger.info?.(`vercel-sandbox ${leaseId}: phase ${name} failed after ${Date.now() - started} ms`);
    throw error;
  }
}
