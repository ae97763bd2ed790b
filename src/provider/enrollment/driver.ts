// The provider side of node enrollment: writes the bootstrap program to the sandbox and runs it through the
// client seam, logs each phase with its duration, turns a failure into a named error carrying bounded box
// evidence, then waits for the gateway to see the node's device. A secret-free probe runs first and adopts a
// live node of the lease: a replay that finds its node running hands nothing over. Otherwise secrets (the
// bootstrap token, the setup code) travel only in the environment of the one bootstrap command, run as
// sandbox root so that no process of the sandbox account can read them (program/account.ts); the plan it
// gets is not secret.
import { WorkerProviderError } from "openclaw/plugin-sdk/plugin-entry";
import type { NodeEnrollment, NodeRuntimePreparation, ProviderLogger } from "../../infra/index.js";
import { messageOf, redact } from "../../infra/index.js";
import type { SandboxBox } from "../../vercel/index.js";
import { EnrollmentTimeoutError, EnrollmentWaitError, NodeBootstrapError, RuntimeMissingError } from "./errors.js";
import {
  type BootstrapPlan,
  type BootstrapTimings,
  DEFAULT_TIMINGS,
  ENROLLMENT_NEEDED,
  enrollmentPlan,
  evidencePlan,
  probePlan,
  runtimePlan,
} from "./plan.js";
import { PROGRAM_ARGV, PROGRAM_ENV } from "./program/index.js";
import {
  type EvidenceEvent,
  evidenceText,
  outcomeOf,
  parseEvents,
  parseOutput,
  phasesOf,
  plainText,
} from "./protocol.js";

export interface BootstrapEnrollerOptions {
  logger?: ProviderLogger;
  /** How long to wait for the gateway to see the node's device; the gateway itself gives up after 10 minutes. */
  waitTimeoutMs?: number;
  timings?: Partial<BootstrapTimings>;
}

export interface PrepareRuntimeOnBox {
  leaseId: string;
  box: SandboxBox;
  runtime: NodeRuntimePreparation;
  signal?: AbortSignal;
}

export interface EnrollOnBox {
  leaseId: string;
  box: SandboxBox;
  enrollment: NodeEnrollment;
  /** The provision's signal (an operator's Stop). */
  signal?: AbortSignal;
  /**
   * Whether the sandbox's egress admits the package registry now. When it does not, a runtime missing from
   * the box is reported as RuntimeMissingError (before any download) instead of an install that cannot work.
   */
  registryOpen?: boolean;
  /** False when no node of this lease can be on the box yet (a sandbox just created): no probe for one. */
  mayHaveNode?: boolean;
}

const DEFAULT_WAIT_MS = 10 * 60_000;
const EVIDENCE_TIMEOUT_MS = 60_000;
/** The bootstrap command's own bound, past the download and install bounds it contains. */
const COMMAND_MARGIN_MS = 2 * 60_000;

export class BootstrapEnroller {
  private readonly logger: ProviderLogger;
  private readonly timings: BootstrapTimings;
  private readonly waitTimeoutMs: number;

  constructor(options: BootstrapEnrollerOptions = {}) {
    this.logger = options.logger ?? { warn: (message) => console.warn(message) };
    this.timings = { ...DEFAULT_TIMINGS, ...options.timings };
    this.waitTimeoutMs = options.waitTimeoutMs ?? DEFAULT_WAIT_MS;
  }

  /** Starts (or adopts) the node on the box and resolves with the device id the gateway saw enroll. */
  async enroll({
    leaseId,
    box,
    enrollment,
    signal,
    registryOpen = true,
    mayHaveNode = true,
  }: EnrollOnBox): Promise<string> {
    const stop = anySignal(signal, enrollment.signal);
    stop?.throwIfAborted();
    const plan = enrollmentPlan(leaseId, enrollment, this.timings, registryOpen);
    const adopted = mayHaveNode && (await this.bootstrap(box, probePlan(plan), undefined, stop));
    if (!adopted) {
      await this.bootstrap(
        box,
        plan,
        {
          [PROGRAM_ENV.token]: enrollment.nodeBootstrap.token,
          ...(enrollment.mode === "connect" ? { [PROGRAM_ENV.setupCode]: enrollment.setupCode } : {}),
        },
        stop,
      );
    }
    return this.awaitDevice(box, plan, enrollment, stop);
  }

  /**
   * Installs the gateway's runtime and publishes its worker archive on the box, for a warm image: the same
   * verified steps as enrollment, and nothing that identifies a node.
   */
  async prepareRuntime({ leaseId, box, runtime, signal }: PrepareRuntimeOnBox): Promise<void> {
    const stop = anySignal(signal, runtime.signal);
    stop?.throwIfAborted();
    const plan = runtimePlan(leaseId, runtime, this.timings);
    await this.bootstrap(
      box,
      plan,
      {
        [PROGRAM_ENV.token]: runtime.nodeBootstrap.token,
        [PROGRAM_ENV.workerToken]: runtime.workerBundle.token,
      },
      stop,
    );
  }

  /**
   * One run of the program; resolves with whether it adopted a live node. Without secrets (the probe) it runs
   * as the sandbox account, and a probe that finds no node resolves false; with secrets it runs as root.
   */
  private async bootstrap(
    box: SandboxBox,
    plan: BootstrapPlan,
    secrets: Record<string, string> | undefined,
    stop?: AbortSignal,
  ): Promise<boolean> {
    const env: Record<string, string> = { [PROGRAM_ENV.plan]: JSON.stringify(plan), ...secrets };
    const timeoutMs = this.timings.downloadTimeoutMs + this.timings.installTimeoutMs + COMMAND_MARGIN_MS;
    const sudo = secrets !== undefined;
    const result = await box.run({ cmd: "node", args: PROGRAM_ARGV, env, sudo, timeoutMs, signal: stop });
    const { events, malformed } = parseOutput(result.stdout);
    // Once per run, with no text from the box: a schema failure means the box is not running our program as given.
    if (malformed > 0)
      this.logger.warn(`vercel-sandbox ${plan.leaseId}: malformed bootstrap output (${malformed} lines dropped)`);
    for (const phase of phasesOf(events)) {
      const detail = phase.detail ? ` ${redact(JSON.stringify(phase.detail))}` : "";
      this.logger.info?.(`vercel-sandbox ${plan.leaseId}: bootstrap ${phase.phase} ${phase.ms} ms${detail}`);
    }
    const outcome = outcomeOf(events);
    if (outcome?.event === "done" && plan.action === "runtime") {
      this.logger.info?.(`vercel-sandbox ${plan.leaseId}: runtime ${outcome.runtime} for the warm image`);
      return false;
    }
    if (outcome?.event === "done") {
      const how = outcome.adopted ? `adopted running node pid ${outcome.pid}` : `started node pid ${outcome.pid}`;
      this.logger.info?.(`vercel-sandbox ${plan.leaseId}: bootstrap ${how} (runtime ${outcome.runtime})`);
      return outcome.adopted;
    }
    if (plan.action === "probe" && outcome?.code === ENROLLMENT_NEEDED) return false;
    // Expected on an enrolled node's replay, and nothing to look at: the caller widens egress and runs again.
    if (outcome?.code === "runtime-missing") throw new RuntimeMissingError(plan.leaseId);
    const evidence = await this.evidence(box, plan);
    if (outcome?.code === "node-version") throw new WorkerProviderError(redact(`vercel-sandbox: ${outcome.message}`));
    if (outcome) throw new NodeBootstrapError(outcome.phase, outcome.code, outcome.message, evidence);
    const said = plainText(`${result.stderr}`.slice(-4000), Number.POSITIVE_INFINITY).slice(-500);
    throw new NodeBootstrapError(
      "run",
      `exit-${result.exitCode}`,
      `the bootstrap program ended without a result${said ? `: ${said}` : ""}; replay the operation`,
      evidence,
    );
  }

  private async awaitDevice(box: SandboxBox, plan: BootstrapPlan, enrollment: NodeEnrollment, stop?: AbortSignal) {
    const started = Date.now();
    const waiting = enrollment.waitForDeviceId();
    // The gateway's wait goes on after ours gives up; its late rejection is expected, not unhandled.
    waiting.catch(() => undefined);
    const timeout = AbortSignal.timeout(this.waitTimeoutMs);
    const outcome = await Promise.race([
      waiting.then(
        (deviceId) => ({ deviceId }),
        (error: unknown) => ({ error }),
      ),
      aborted(timeout).then(() => ({ timedOut: true as const })),
      ...(stop ? [aborted(stop).then(() => ({ error: stop.reason as unknown }))] : []),
    ]);
    const ms = Date.now() - started;
    this.logger.info?.(`vercel-sandbox ${plan.leaseId}: bootstrap wait ${ms} ms`);
    if ("deviceId" in outcome && typeof outcome.deviceId === "string" && outcome.deviceId) return outcome.deviceId;
    // Stopping (operator or gateway shutdown): the provider decides what happens to the sandbox; no evidence.
    if (stop?.aborted) throw stop.reason instanceof Error ? stop.reason : new Error(String(stop.reason));
    const evidence = await this.evidence(box, plan);
    if ("timedOut" in outcome) throw new EnrollmentTimeoutError(ms, evidence);
    const reason = "error" in outcome ? messageOf(outcome.error) : "the gateway reported no device id";
    throw new EnrollmentWaitError(reason, evidence);
  }

  /** Bounded, redacted facts from the box; never throws (a failure to look is itself reported). */
  private async evidence(box: SandboxBox, plan: BootstrapPlan): Promise<string> {
    try {
      const result = await box.run({
        cmd: "node",
        args: PROGRAM_ARGV,
        env: { [PROGRAM_ENV.plan]: JSON.stringify(evidencePlan(plan)) },
        // Root, to remove a handoff directory (program/account.ts) a failed run left.
        sudo: true,
        timeoutMs: EVIDENCE_TIMEOUT_MS,
        signal: AbortSignal.timeout(EVIDENCE_TIMEOUT_MS),
      });
      const event = parseEvents(result.stdout).find((e): e is EvidenceEvent => e.event === "evidence");
      return redact(evidenceText(event, `exit ${result.exitCode}`));
    } catch (error) {
      return redact(evidenceText(undefined, messageOf(error)));
    }
  }
}

function anySignal(...signals: Array<AbortSignal | undefined>): AbortSignal | undefined {
  const present = signals.filter((s): s is AbortSignal => s !== undefined);
  return present.length === 0 ? undefined : present.length === 1 ? present[0] : AbortSignal.any(present);
}

function aborted(signal: AbortSignal): Promise<void> {
  if (signal.aborted) return Promise.resolve();
  return new Promise((resolve) => signal.addEventListener("abort", () => resolve(), { once: true }));
}
