// Keeping a lease's session alive while its sandbox runs: Vercel stops a sandbox at its session timeout, so
// each lease this process provisioned or saw running gets a keepalive that extends the session (see
// `extensionMs`), and `renew` extends it on demand. A keepalive ends once the sandbox is not running, or with a
// reason when Vercel refuses the extension for good (a rotated token, a plan's timeout limit).
import { messageOf } from "../../infra/index.js";
import type { ProfileSettings } from "../../settings/index.js";
import { isFailure } from "../../vercel/index.js";
import { sandboxNameOf } from "../allocation.js";
import { extensionMs, type TickOutcome } from "../keepalive.js";
import type { ProviderParts } from "../parts.js";
import { sanitized } from "../steps/cleanup.js";

export interface Renewal {
  /** Starts (or keeps) the lease's keepalive; `renew` can extend it from now on. */
  arm(leaseId: string, sandboxName: string, settings: ProfileSettings): void;
  /** Stops the lease's keepalive (its sandbox is not running). */
  disarm(leaseId: string): Promise<void>;
  /** Stops the lease's keepalive and forgets it: the lease is being destroyed. */
  end(leaseId: string): Promise<void>;
  /** Extends the lease's session now; the lease must be active in this process. */
  renew(leaseId: string): Promise<void>;
  /** Stops every keepalive (gateway stop). */
  dispose(): Promise<void>;
  /** Leases whose keepalive runs in this process. */
  leases(): string[];
}

export function createRenewal({ keepalive, serial, projectFor }: ProviderParts): Renewal {
  const knownSettings = new Map<string, ProfileSettings>();

  async function extendIfRunning(sandboxName: string, settings: ProfileSettings): Promise<TickOutcome> {
    const project = await projectFor(settings);
    const sandbox = await project.find(sandboxName);
    if (sandbox?.status !== "running") return { keep: false };
    const interval = keepalive.intervalFor(settings.timeoutMs);
    const ms = extensionMs(sandbox.expiresAt, Date.now(), settings.timeoutMs, interval);
    if (ms > 0) {
      try {
        await project.extendTimeout(sandbox, ms);
      } catch (error) {
        if (isFailure(error, "transient")) throw error;
        return { keep: false, reason: messageOf(error) };
      }
    }
    return { keep: true };
  }

  return {
    arm(leaseId, sandboxName, settings) {
      knownSettings.set(leaseId, settings);
      keepalive.arm({ leaseId, timeoutMs: settings.timeoutMs, tick: () => extendIfRunning(sandboxName, settings) });
    },

    async disarm(leaseId) {
      await keepalive.disarm(leaseId);
    },

    async end(leaseId) {
      await keepalive.disarm(leaseId);
      knownSettings.delete(leaseId);
    },

    async renew(leaseId) {
      const settings = knownSettings.get(leaseId);
      if (!settings) throw new Error(`vercel-sandbox: lease ${leaseId} is not active in this gateway process`);
      let outcome: TickOutcome;
      try {
        outcome = await serial.run(leaseId, () => extendIfRunning(sandboxNameOf(leaseId), settings));
      } catch (error) {
        throw sanitized(error);
      }
      if (!outcome.keep && outcome.reason) throw new Error(`vercel-sandbox: lease ${leaseId}: ${outcome.reason}`);
    },

    async dispose() {
      await keepalive.stopAll();
    },

    leases() {
      return keepalive.armed();
    },
  };
}
