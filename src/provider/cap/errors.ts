// The cap's refusals. Both are WorkerProviderErrors: nothing was allocated for the placement, so core fails it
// at once and runs no cleanup (a plain error would make core replay the provision on its sweep: a silent wait).
// OpenClaw 2026.9.2's WorkerProviderError carries no retry flag of its own; `retryable` and the message say
// that sending the message again (or dispatching again) later is the remedy.
import { WorkerProviderError } from "openclaw/plugin-sdk/plugin-entry";

/** Every counted worker is busy (in an active turn, or still being placed): nothing may be reclaimed now. */
export class WorkerCapReachedError extends WorkerProviderError {
  override readonly name = "WorkerCapReachedError";
  readonly retryable = true;

  constructor(
    readonly maxWorkers: number,
    readonly counted: number,
    readonly busy: number,
  ) {
    super(
      `vercel-sandbox: maxWorkers ${maxWorkers} reached and every worker is busy (${busy} of ${counted} in an ` +
        "active turn or being placed); no idle worker can be reclaimed now. Retry once a turn ends, or raise maxWorkers",
    );
  }
}

/** The least recently active idle worker could not be reclaimed through the gateway. */
export class WorkerCapReclaimError extends WorkerProviderError {
  override readonly name = "WorkerCapReclaimError";
  readonly retryable = true;

  constructor(
    readonly maxWorkers: number,
    reason: string,
  ) {
    super(
      `vercel-sandbox: maxWorkers ${maxWorkers} reached and reclaiming an idle worker through the gateway failed ` +
        `(${reason}); nothing was allocated. Retry shortly; \`openclaw vercel-sandbox status\` shows the workers`,
    );
  }
}

/** The cap is full and an idle worker is being reclaimed through the gateway for this placement: retry shortly. */
export class WorkerCapReclaimingError extends WorkerProviderError {
  override readonly name = "WorkerCapReclaimingError";
  readonly retryable = true;
  readonly retryAfterMs = 5_000;

  constructor(
    readonly maxWorkers: number,
    among: string,
  ) {
    super(
      `vercel-sandbox: maxWorkers ${maxWorkers} reached; the least recently active idle worker (${among}) is being ` +
        "reclaimed through the gateway (its workspace reconciled first), which OpenClaw runs only once no placement " +
        "is in flight. Retry this placement in a few seconds; nothing was allocated",
    );
  }
}
