// Pure decisions of node enrollment: which gateway descriptor is acceptable, and the non-secret plan the
// bootstrap program runs on the sandbox. Secrets are never part of a plan: they travel separately, in the
// environment of the one bootstrap command, run as sandbox root (see driver.ts), so a plan may be logged, put
// in argv or written to the sandbox without leaking anything.
import type { NodeEnrollment, NodeRuntimePreparation } from "../../infra/index.js";
import {
  type EngineRange,
  enginesFor,
  NODE_ENGINES_2026_9_2,
  type PluginActivation,
  pluginActivation,
} from "./engines.js";

export type { EngineRange } from "./engines.js";
export { satisfiesEngines } from "./engines.js";

/** OpenClaw 2026.9.2's engines, the primary host's (what `doctor` checks the gateway's own Node against). */
export const NODE_ENGINES: readonly EngineRange[] = NODE_ENGINES_2026_9_2.ranges;
export const NODE_ENGINES_TEXT = NODE_ENGINES_2026_9_2.text;

/** Timings the program honours; each bounds one step on the box. */
export interface BootstrapTimings {
  downloadTimeoutMs: number;
  installTimeoutMs: number;
  /** How long a freshly launched node must stay alive before the program reports success. */
  launchGraceMs: number;
}

export const DEFAULT_TIMINGS: BootstrapTimings = {
  downloadTimeoutMs: 5 * 60_000,
  installTimeoutMs: 10 * 60_000,
  launchGraceMs: 1_500,
};

/**
 * The account the node and everything the program installs belong to: the SDK's default user, as whom the
 * agent's commands run. The program itself starts as root when it carries secrets and becomes this user.
 */
export const SANDBOX_ACCOUNT = "vercel-sandbox";

export interface BootstrapPlan {
  /** `probe`: the secret-free first run that adopts a live node of this lease, or says enrollment is needed. */
  action: "enroll" | "evidence" | "runtime" | "probe";
  account: string;
  leaseId: string;
  mode: "connect" | "resume";
  displayName: string;
  openclawVersion: string;
  artifact: { url: string; sha256: string; bytes: number; pin?: string };
  /** Runtime preparation only: the worker archive published inside the installed package. */
  workerBundle?: { url: string; sha256: string; bytes: number; pin?: string; packageRelativePath: string };
  enabledPluginIds: string[];
  /** How this release's node gets those plugins enabled, relative to publishing the runtime pointer. */
  pluginActivation: PluginActivation;
  /**
   * Whether the program may install a runtime that is not on the box. False when the sandbox's egress admits
   * no package registry (an enrolled node's replay): a missing runtime is then reported (`runtime-missing`)
   * before anything is downloaded, instead of an npm install that cannot succeed.
   */
  installRuntime: boolean;
  engines: readonly EngineRange[];
  enginesText: string;
  timings: BootstrapTimings;
}

/** The gateway handed us something the bootstrap must not act on. */
export class EnrollmentDescriptorError extends Error {
  override readonly name = "EnrollmentDescriptorError";
  constructor(
    readonly field: string,
    reason: string,
  ) {
    super(
      `vercel-sandbox: the gateway's node bootstrap descriptor is unusable: \`${field}\` ${reason}; replay the operation, and if it persists, restart the gateway`,
    );
  }
}

const LEASE_ID = /^[A-Za-z0-9_-]{1,128}$/;
const PLUGIN_ID = /^[a-z0-9][a-z0-9._-]{0,127}$/i;
const SHA256 = /^[0-9a-f]{64}$/;

/** A TLS pin as the program compares it: 64 lowercase hex digits, from `sha256:AB:CD…` or plain hex. */
export function normalizeFingerprint(raw: string): string {
  const hex = raw
    .trim()
    .replace(/^sha256:/i, "")
    .replace(/:/g, "")
    .toLowerCase();
  if (!SHA256.test(hex))
    throw new EnrollmentDescriptorError("nodeBootstrap.tlsFingerprint", "is not a SHA-256 fingerprint");
  return hex;
}

/** The artifact URL: http(s) only, no credentials, query or fragment (the bearer token is a header). */
export function checkArtifactUrl(raw: string, pinned: boolean): string {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new EnrollmentDescriptorError("nodeBootstrap.url", "is not a URL");
  }
  if (url.protocol !== "https:" && url.protocol !== "http:") {
    throw new EnrollmentDescriptorError("nodeBootstrap.url", "must be http or https");
  }
  if (pinned && url.protocol !== "https:") {
    throw new EnrollmentDescriptorError("nodeBootstrap.url", "must be https when a TLS fingerprint is pinned");
  }
  if (url.username || url.password || url.search || url.hash) {
    throw new EnrollmentDescriptorError("nodeBootstrap.url", "must not carry credentials, a query or a fragment");
  }
  return url.href;
}

/** The plan for one enrollment on one lease's sandbox. Throws EnrollmentDescriptorError naming the bad field. */
export function enrollmentPlan(
  leaseId: string,
  enrollment: NodeEnrollment,
  timings: BootstrapTimings = DEFAULT_TIMINGS,
  installRuntime = true,
): BootstrapPlan {
  const bootstrap = enrollment.nodeBootstrap;
  if (!LEASE_ID.test(leaseId)) throw new EnrollmentDescriptorError("leaseId", "is not a lease id of ours");
  const artifact = artifactOf("nodeBootstrap", bootstrap);
  const plugins = bootstrap.enabledPluginIds ?? [];
  const badPlugin = plugins.find((id) => !PLUGIN_ID.test(id));
  if (badPlugin !== undefined)
    throw new EnrollmentDescriptorError("nodeBootstrap.enabledPluginIds", "holds an id that is not a plugin id");
  if (!enrollment.openclawVersion) throw new EnrollmentDescriptorError("openclawVersion", "is empty");
  if (enrollment.mode === "connect" && !enrollment.setupCode) {
    throw new EnrollmentDescriptorError("setupCode", "is empty");
  }
  return {
    action: "enroll",
    account: SANDBOX_ACCOUNT,
    leaseId,
    mode: enrollment.mode,
    // Core caps it at 64 characters; the cap here only guards argv against a surprise.
    displayName: (enrollment.displayName || "Cloud worker").slice(0, 128),
    openclawVersion: enrollment.openclawVersion,
    artifact,
    enabledPluginIds: [...plugins],
    pluginActivation: pluginActivation(enrollment.openclawVersion, plugins),
    installRuntime,
    engines: enginesFor(enrollment.openclawVersion).ranges,
    enginesText: enginesFor(enrollment.openclawVersion).text,
    timings,
  };
}

/** The artifact part of a descriptor, checked: digest, size, URL and pin. */
function artifactOf(
  field: string,
  artifact: { url: string; token: string; sha256: string; bytes: number; tlsFingerprint?: string },
) {
  const sha256 = String(artifact.sha256).toLowerCase();
  if (!SHA256.test(sha256)) throw new EnrollmentDescriptorError(`${field}.sha256`, "is not 64 hex digits");
  if (!Number.isSafeInteger(artifact.bytes) || artifact.bytes <= 0) {
    throw new EnrollmentDescriptorError(`${field}.bytes`, "is not a positive byte count");
  }
  const pin = artifact.tlsFingerprint ? normalizeFingerprint(artifact.tlsFingerprint) : undefined;
  const url = checkArtifactUrl(artifact.url, pin !== undefined);
  if (!artifact.token) throw new EnrollmentDescriptorError(`${field}.token`, "is empty");
  return { url, sha256, bytes: artifact.bytes, ...(pin ? { pin } : {}) };
}

/** The plan that installs the runtime (and publishes the worker archive) for a warm image; nothing enrolls. */
export function runtimePlan(
  leaseId: string,
  runtime: NodeRuntimePreparation,
  timings: BootstrapTimings = DEFAULT_TIMINGS,
): BootstrapPlan {
  if (!LEASE_ID.test(leaseId)) throw new EnrollmentDescriptorError("leaseId", "is not a lease id of ours");
  const bundle = runtime.workerBundle;
  if (!/^[a-z][a-z-]*\/[0-9a-f]{64}\.tgz$/.test(bundle.packageRelativePath ?? "")) {
    throw new EnrollmentDescriptorError("workerBundle.packageRelativePath", "is not <directory>/<sha256>.tgz");
  }
  if (!runtime.nodeBootstrap.openclawVersion) {
    throw new EnrollmentDescriptorError("nodeBootstrap.openclawVersion", "is empty");
  }
  return {
    action: "runtime",
    account: SANDBOX_ACCOUNT,
    leaseId,
    mode: "connect",
    displayName: "",
    openclawVersion: runtime.nodeBootstrap.openclawVersion,
    artifact: artifactOf("nodeBootstrap", runtime.nodeBootstrap),
    workerBundle: { ...artifactOf("workerBundle", bundle), packageRelativePath: bundle.packageRelativePath },
    enabledPluginIds: [],
    pluginActivation: pluginActivation(runtime.nodeBootstrap.openclawVersion, []),
    installRuntime: true,
    engines: enginesFor(runtime.nodeBootstrap.openclawVersion).ranges,
    enginesText: enginesFor(runtime.nodeBootstrap.openclawVersion).text,
    timings,
  };
}

/** The plan of the evidence run after a failure: same lease paths, nothing to download or start. */
export function evidencePlan(plan: BootstrapPlan): BootstrapPlan {
  return { ...plan, action: "evidence" };
}

/** The plan of the probe run: same lease paths; it adopts a live node or reports `enrollment-needed`. */
export function probePlan(plan: BootstrapPlan): BootstrapPlan {
  return { ...plan, action: "probe" };
}

/** The probe's failure code when no live node of the lease is there: the secret-bearing run must follow. */
export const ENROLLMENT_NEEDED = "enrollment-needed";
