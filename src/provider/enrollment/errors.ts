// Named enrollment failures. Each carries the facts (phase, code) and a message that says what happened and
// what to do; evidence from the box is appended once collected. Messages are redacted where they are built,
// and again by the provider on the way out.
import { redact } from "../../infra/index.js";
import { plainText } from "./protocol.js";

/** A bootstrap step on the sandbox failed; `phase` is the step, `code` the reason (for example `http-401`). */
export class NodeBootstrapError extends Error {
  override readonly name = "NodeBootstrapError";
  constructor(
    readonly phase: string,
    readonly code: string,
    detail: string,
    readonly evidence = "",
  ) {
    // From the box: one plain bounded line, whatever it printed.
    const said = plainText(detail);
    super(
      redact(`vercel-sandbox: node bootstrap ${phase} failed (${code}): ${said}${evidence ? `; ${evidence}` : ""}`),
    );
  }
}

/** The node started but the gateway did not see it enroll within the wait. */
export class EnrollmentTimeoutError extends Error {
  override readonly name = "EnrollmentTimeoutError";
  constructor(
    readonly waitedMs: number,
    readonly evidence = "",
  ) {
    super(
      redact(
        `vercel-sandbox: the node did not enroll with the gateway within ${Math.round(waitedMs / 1000)} s; ` +
          `check that the sandbox reaches the gateway (its egress allows the gateway's host) and the node's log` +
          `${evidence ? `; ${evidence}` : ""}`,
      ),
    );
  }
}

/** The gateway's wait for the device failed for a reason of its own (it reports why). */
export class EnrollmentWaitError extends Error {
  override readonly name = "EnrollmentWaitError";
  constructor(
    reason: string,
    readonly evidence = "",
  ) {
    super(redact(`vercel-sandbox: waiting for the node to enroll failed: ${reason}${evidence ? `; ${evidence}` : ""}`));
  }
}

/**
 * The node's verified runtime is not on the box, and the plan said the sandbox's egress admits no package
 * registry to install it (an enrolled node's replay runs at the enrolled, gateway-only stage). Not a failure
 * of the box: the caller opens the registry for a reinstall and runs the bootstrap again.
 */
export class RuntimeMissingError extends Error {
  override readonly name = "RuntimeMissingError";
  constructor(readonly leaseId: string) {
    super(
      `vercel-sandbox: lease ${leaseId}'s node runtime is gone from the sandbox and its egress does not admit the package registry to reinstall it`,
    );
  }
}
