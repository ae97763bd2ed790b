// Step 4: enroll the sandbox as an ephemeral OpenClaw node through core's environment-owned enrollment.
// Egress opens for the bootstrap (gateway and package registry) and narrows to the gateway once enrolled. A
// node enrolled before (the ledger's mark) is adopted, or resumed on the runtime it verified, through the
// gateway alone: its egress stays at the enrolled stage, or follows the gateway if its host moved since. Only
// when that runtime is gone from the box (the bootstrap reports it before downloading anything) does the
// registry open again, for the reinstall alone, and the box ends at the enrolled stage whatever happens.
// Secrets core hands over are registered for redaction first.
import { WorkerProviderError } from "openclaw/plugin-sdk/plugin-entry";
import type { NodeEnrollment } from "../../infra/index.js";
import { messageOf, registerSecret } from "../../infra/index.js";
import type { SandboxBox, SandboxHandle } from "../../vercel/index.js";
import { RuntimeMissingError } from "../enrollment/index.js";
import { egressPolicy, gatewayHostOf } from "../policy.js";
import type { ProvisionRun, StepContext } from "./run.js";

export interface EnrollmentContext {
  leaseId: string;
  /** The SDK handle, for custom enrollers; the built-in one uses only `box`. */
  sandbox: SandboxHandle;
  /** The sandbox through the client seam: write files, run a command (retries, classification, redaction). */
  box: SandboxBox;
  enrollment: NodeEnrollment;
  signal?: AbortSignal;
  /**
   * Whether the sandbox's egress admits the package registry for this run. False on an enrolled node's
   * replay: an enroller that finds its runtime gone throws RuntimeMissingError (enrollment/errors.ts), and the
   * step runs it again with the registry open.
   */
  registryOpen: boolean;
  /**
   * Whether a node this lease started may already run on the box (false for a sandbox this attempt created): only
   * then does the built-in enroller first look for one to adopt, with a secret-free run.
   */
  mayHaveNode?: boolean;
}
/** Starts the OpenClaw node on the sandbox and resolves with its device id. */
export type NodeEnroller = (context: EnrollmentContext) => Promise<string>;

export interface Enrolled {
  deviceId: string;
  /** The gateway host the egress is narrowed to now ("" when the gateway URL named none to allow). */
  gateway: string;
}

/** How long narrowing back after a reinstall may take; not the provision's signal, which may have fired. */
const NARROW_TIMEOUT_MS = 60_000;

/** Moves the sandbox's egress to one stage of the worker's life (policy.ts). */
type Stage = (name: "bootstrap" | "enrolled", signal?: AbortSignal) => Promise<void>;

/** `enrolledGateway`: the host the sandbox's egress was narrowed to when its node enrolled before, if it did. */
export async function enrollNode(
  run: ProvisionRun,
  context: StepContext,
  sandbox: SandboxHandle,
  enroll: NodeEnroller,
  enrolledGateway?: string,
): Promise<Enrolled> {
  const { options, project, settings } = run;
  const { leaseId } = run.allocation;
  if (!options.beginNodeEnrollment) {
    throw new WorkerProviderError("vercel-sandbox: the gateway did not offer node enrollment for this worker");
  }
  const enrollment = await options.beginNodeEnrollment();
  run.enrollment = enrollment;
  registerSecret(enrollment.nodeBootstrap.token, leaseId);
  if (enrollment.mode === "connect") registerSecret(enrollment.setupCode, leaseId);
  context.step("enrollment-started", leaseId);
  const gatewayHost = gatewayHostOf(enrollment.nodeBootstrap.url) ?? "";
  const gateway = gatewayHost ? [gatewayHost] : [];
  const restricted = settings.networkPolicy !== "allow-all";
  const fresh = enrolledGateway === undefined;
  const stage: Stage = (name, signal = options.signal) =>
    project.updateNetworkPolicy(sandbox, egressPolicy(settings, gateway, name), signal);
  if (restricted && fresh) {
    await stage("bootstrap");
  } else if (restricted && enrolledGateway !== gatewayHost) {
    // The gateway moved since the node enrolled: its egress follows, still gateway-only.
    await stage("enrolled");
  }
  const box = project.box(sandbox);
  const attempt = (registryOpen: boolean) =>
    enroll({ leaseId, sandbox, box, enrollment, signal: options.signal, registryOpen, mayHaveNode: !run.created });
  const deviceId =
    restricted && !fresh
      ? await attempt(false).catch((error: unknown) => reinstalled(error, attempt, stage, context, leaseId))
      : await attempt(true);
  if (restricted && fresh) await stage("enrolled");
  context.step("enrolled", leaseId);
  return { deviceId, gateway: gatewayHost };
}

/**
 * An enrolled node's replay found its runtime gone: the registry opens for the reinstall alone, and the box
 * goes back to the enrolled stage on every path (done, failed, stopped), under its own bound since the
 * provision's signal may be what ended the attempt. A failure to narrow after a failure is logged; the
 * reinstall's failure is what is reported (and the sandbox is then released, or kept by a gateway shutdown).
 */
async function reinstalled(
  error: unknown,
  attempt: (registryOpen: boolean) => Promise<string>,
  stage: Stage,
  context: StepContext,
  leaseId: string,
): Promise<string> {
  if (!(error instanceof RuntimeMissingError)) throw error;
  context.logger.info?.(`vercel-sandbox ${leaseId}: the node's runtime is gone; reinstalling with the registry open`);
  const narrow = () => stage("enrolled", AbortSignal.timeout(NARROW_TIMEOUT_MS));
  let deviceId: string;
  try {
    // Inside: an update whose answer was lost may have opened the registry all the same.
    await stage("bootstrap");
    deviceId = await attempt(true);
  } catch (failure) {
    await narrow().catch((narrowing: unknown) => {
      context.logger.warn(
        `vercel-sandbox ${leaseId}: egress stayed open after a failed reinstall: ${messageOf(narrowing)}`,
      );
    });
    throw failure;
  }
  await narrow();
  return deviceId;
}
