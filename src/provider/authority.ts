// Allocation authority, as OpenClaw 2026.9.6 asks of a worker provider: the gateway passes
// `options.assertCurrent()` to `provision`, bound to the live environment owner and any requesting run, and a
// provider calls it after awaited preparation and immediately before an allocation, a fork from a checkpoint or
// an adoption (docs/plugins/sdk-runtime.md, "Worker provider allocation authority"). A project preparation's
// own `project.assertCurrent()` is composed with it, and an aborted attempt stops there too. 2026.9.2 to 9.5
// pass no host assertion: then only the signal and the project's assertion are checked, as before.
import type { ProvisionOptions } from "../infra/index.js";

/** The provision options of 2026.9.6 and later: the host's allocation authority, optional for older hosts. */
export type ProvisionOptionsWithAuthority = ProvisionOptions & { assertCurrent?: () => void };

/** Throws (the host's or the project's error, or the abort reason) unless this attempt may still allocate or adopt. */
export function assertMayAllocate(options: ProvisionOptionsWithAuthority): void {
  options.signal?.throwIfAborted();
  options.assertCurrent?.();
  options.project?.assertCurrent();
}
