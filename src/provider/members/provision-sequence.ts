// One provision attempt, under the lease's lock: allocate → create or adopt → prepare → enroll → keep alive.
// Each step lives in src/provider/steps; this file only orders them and maps the outcome onto the contract.
// A lease already destroyed is never re-created; a lease the ledger knows enrolled is adopted as it is.
// Whatever a failure left (a released sandbox, a kept one mid-enrollment), it is not known enrolled, and the
// one cleanup rule (steps/cleanup.ts) decides what the caller sees.
import type { WorkerLease } from "openclaw/plugin-sdk/plugin-entry";
import { WorkerProviderError } from "openclaw/plugin-sdk/plugin-entry";
import { messageOf } from "../../infra/index.js";
import { CaptureRequiredError, DeclaredPreparationError, ImageRefusedError } from "../../preparation/index.js";
import type { ProviderParts } from "../parts.js";
import { baseOnRequest, baseStarted } from "../steps/base-request.js";
import { failProvision } from "../steps/cleanup.js";
import { adoptEnrolled, createOrAdopt } from "../steps/create-or-adopt.js";
import { enrollNode } from "../steps/enroll.js";
import { phase } from "../steps/progress.js";
import type { ProvisionRun } from "../steps/run.js";
import { chooseStart, imageGone, imageOf, prepareStep, type StartChoice } from "../steps/warm-images.js";
import { startWorker } from "../steps/worker-start.js";
import type { Renewal } from "./renewal.js";

/** What provision checked and decided before the lock: the run without its project and progress. */
export type ProvisionRequest = Pick<ProvisionRun, "allocation" | "settings" | "rawSettings" | "vcpus" | "options">;

export async function provisionSequence(
  { ledger, warmImages, steps, enroll, projectFor, options }: ProviderParts,
  renewal: Renewal,
  request: ProvisionRequest,
): Promise<WorkerLease> {
  const { leaseId, sandboxName } = request.allocation;
  const { signal } = request.options;
  if (await ledger.tombstone(leaseId)) {
    throw new WorkerProviderError(`vercel-sandbox: lease ${leaseId} was already destroyed; it is not re-created`);
  }
  const project = await projectFor(request.settings);
  signal?.throwIfAborted();
  const run: ProvisionRun = { ...request, project, mayExist: false };
  let start: StartChoice | undefined;
  try {
    const mark = await ledger.enrolled(leaseId);
    const enrolled = mark ? await adoptEnrolled(run, steps) : undefined;
    start = enrolled ? undefined : await phase(steps, leaseId, "allocate", () => chooseStart(run, warmImages));
    const chosen = start;
    let sandbox =
      enrolled ??
      (await phase(steps, leaseId, "create or adopt", () => createOrAdopt(run, steps, imageOf(chosen))).catch(
        async (error: unknown) => {
          throw await imageGone(error, chosen, warmImages);
        },
      ));
    signal?.throwIfAborted();
    // A worker without a project captures the base image first when `images warm` asked for one.
    const created = chosen ? sandbox : await baseOnRequest(run, steps, sandbox, warmImages, options.stateDir);
    sandbox = created;
    // Only a project is prepared; a worker without one that starts from the base image goes on to enrollment.
    const prepared =
      chosen && run.options.project
        ? await phase(steps, leaseId, "preparation", () => prepareStep(run, steps, created, chosen, warmImages))
        : undefined;
    if (chosen && !run.options.project) await baseStarted(run, steps, chosen, warmImages, options.stateDir);
    sandbox = prepared?.sandbox ?? sandbox;
    const enrolledOn = sandbox;
    const node = await phase(steps, leaseId, "enrollment", () =>
      enrollNode(run, steps, enrolledOn, enroll, enrolled ? mark?.gateway : undefined),
    );
    if (start) await warmImages.store.advanceChoice(leaseId, "enrolled");
    if (prepared) await phase(steps, leaseId, "worker start", () => startWorker(run, enrolledOn, prepared));
    await ledger.markEnrolled(leaseId, sandboxName, node.gateway);
    renewal.arm(leaseId, sandboxName, request.settings);
    return { leaseId, sharedHost: false, node: { deviceId: node.deviceId } };
  } catch (error) {
    await ledger.forgetEnrolled(leaseId);
    const out = await failProvision(run, steps, error);
    // A declared recipe's failure is permanent once nothing is left behind, and so is a refused image: the
    // lease's recorded start is that image, so a replay would meet it again (the next dispatch starts cold).
    // So is a box core requires captured that cannot be (CaptureRequiredError): a retry would meet the same box.
    if (
      out instanceof DeclaredPreparationError ||
      out instanceof ImageRefusedError ||
      out instanceof CaptureRequiredError
    ) {
      throw new WorkerProviderError(messageOf(out));
    }
    throw out;
  }
}
