// Step 4: enroll the sandbox as an ephemeral OpenClaw node through core's environment-owned enrollment.
// Egress opens for the bootstrap (gateway and package registry) and narrows to the gateway once enrolled. A
// node enrolled before (the ledger's mark) is adopted, or resumed on the runtime it verified, through the
// gateway alone: its egress stays at the enrolled stage, or follows the gateway if its host moved since.
// Secrets core hands over are registered for redaction first.
import { WorkerProviderError } from "openclaw/plugin-sdk/plugin-entry";
import type { SandboxBox, SandboxHandle } from "../client.js";
import { egressPolicy, gatewayHostOf } from "../policy.js";
import { registerSecret } from "../redact.js";
import type { NodeEnrollment } from "../types.js";
import type { ProvisionRun, StepContext } from "./run.js";

export interface EnrollmentContext {
  leaseId: string;
  /** The SDK handle, for custom enrollers; the built-in one uses only `box`. */
  sandbox: SandboxHandle;
  /** The sandbox through the client seam: write files, run a command (retries, classification, redaction). */
  box: SandboxBox;
  enrollment: NodeEnrollment;
  signal?: AbortSignal;
}
/** Starts the OpenClaw node on the sandbox and resolves with its device id. */
export type NodeEnroller = (context: EnrollmentContext) => Promise<string>;

export interface Enrolled {
  deviceId: string;
  /** The gateway host the egress is narrowed to now ("" when the gateway URL named none to allow). */
  gateway: string;
}

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
  if (restricted && fresh) {
    await project.updateNetworkPolicy(sandbox, egressPolicy(settings, gateway, "bootstrap"), options.signal);
  } else if (restricted && enrolledGateway !== gatewayHost) {
    // The gateway moved since the node enrolled: its egress follows, still gateway-only.
    await project.updateNetworkPolicy(sandbox, egressPolicy(settings, gateway, "enrolled"), options.signal);
  }
  const box = project.box(sandbox);
  const deviceId = await enroll({ leaseId, sandbox, box, enrollment, signal: options.signal });
  if (restricted && fresh) {
    await project.updateNetworkPolicy(sandbox, egressPolicy(settings, gateway, "enrolled"), options.signal);
  }
  context.step("enrolled", leaseId);
  return { deviceId, gateway: gatewayHost };
}
