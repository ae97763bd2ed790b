// `openclaw vercel-sandbox images warm [--worker-profile id]` (not `--profile`: OpenClaw's root option of that
// name selects a state dir and never reaches a plugin command): builds the base runtime image of a profile (its
// runtime digest and sandbox shape, src/preparation/key.ts) ahead of the first dispatch, so that a new
// project's first worker starts from it and installs no runtime. On OpenClaw 2026.9.x core hands a provider the
// node runtime only inside a provision it runs, so the image is built on the running gateway through core's own
// path: a request of this run's own for the profile's shape beside the image store (preparation/warm-request.ts),
// then a worker environment created, waited for and destroyed through the gateway (warm-environment.ts). That
// worker's provision takes a request and runs the cold provision's base step right after its sandbox was created,
// before enrollment (provider/steps/base-request.ts), so no agent code ran on the box it captures. A base image
// of the profile's shape and of the OpenClaw version this CLI runs in already in the store makes it a no-op
// that says so; one of another version (an upgraded gateway) is not current, and the gateway's worker decides
// by the exact runtime digest.
import { messageOf } from "../infra/index.js";
import {
  CAPTURING_ELSEWHERE,
  type ImageRecord,
  ImageStore,
  type PreparationDiagnostics,
  profileKeyOf,
  requestBaseImage,
  withdrawBaseImageRequest,
} from "../preparation/index.js";
import type { VercelClient } from "../vercel/index.js";
import { CliError } from "./errors.js";
import type { GatewayCall } from "./gateway.js";
import { type ProfileEntry, vercelProfiles } from "./profiles.js";
import { DEFAULT_TIMINGS, type EnvironmentTimings, withWorkerEnvironment } from "./warm-environment.js";

const seconds = (ms: number) => `${(ms / 1000).toFixed(1)} s`;

export interface WarmInput {
  /** `--worker-profile`; without it the one vercel-sandbox profile of the config. */
  profileId?: string;
  /** The gateway's config (`cloudWorkers.profiles`). */
  config: unknown;
  /** The scope a profile without `scope` uses. */
  pluginScope: string;
  /** The gateway's state dir: the image store and the request live there. */
  stateDir: string;
  call: GatewayCall;
  client: VercelClient;
  /** One line per phase as it ends. */
  progress: (line: string) => void;
  /** Ctrl-C: the environment is still destroyed. */
  signal: AbortSignal;
  timings?: EnvironmentTimings;
  /**
   * The OpenClaw version this CLI runs in (the gateway's, in one install): base images of another are stale.
   * Unknown: no shortcut, the gateway's worker decides.
   */
  openclawVersion: string | undefined;
}

export interface WarmReport {
  profile: string;
  /** Whether this run captured the image (false: a base image of the shape existed). */
  built: boolean;
  snapshotId: string;
  /** The base key (runtime digests and shape) of the image. */
  baseKey: string;
  /** The gateway's environment that built it, destroyed before the command returned (absent: nothing created). */
  environmentId?: string;
  leaseId?: string;
  wallMs: number;
  sizeBytes?: number;
  note: string;
}

/** The profile `images warm` builds for: the named one, or the config's only one; anything else is refused. */
export function chooseProfile(profiles: readonly ProfileEntry[], profileId: string | undefined) {
  const ids = profiles.map((p) => p.id).join(", ") || "none";
  const entry = profileId === undefined ? undefined : profiles.find((p) => p.id === profileId);
  if (profileId !== undefined && !entry) {
    throw new CliError(
      `no cloudWorkers profile "${profileId}" uses provider vercel-sandbox`,
      `Name one of this provider's profiles (${ids}) with --worker-profile`,
    );
  }
  if (profileId === undefined && profiles.length !== 1) {
    throw new CliError(
      profiles.length === 0
        ? "no cloudWorkers profile uses provider vercel-sandbox"
        : `${profiles.length} cloudWorkers profiles use provider vercel-sandbox`,
      profiles.length === 0 ? "Add one, then run images warm again" : `Name one with --worker-profile (${ids})`,
    );
  }
  const chosen = (entry ?? profiles[0]) as ProfileEntry;
  if (!chosen.ok) {
    throw new CliError(
      `profile "${chosen.id}" is invalid: ${chosen.error.message}`,
      "Fix it (`openclaw vercel-sandbox doctor` says how)",
    );
  }
  if (!chosen.settings.warmImage) {
    throw new CliError(
      `profile "${chosen.id}" sets warmImage: false, so no worker of it would start from a base image`,
      "Remove warmImage: false from the profile to use warm images",
    );
  }
  return chosen;
}

/** The newest base image of the profile's shape and this OpenClaw version that may serve allocations. */
async function baseImageOf(
  store: ImageStore,
  profileKey: string,
  openclawVersion: string | undefined,
): Promise<ImageRecord | undefined> {
  if (openclawVersion === undefined) return undefined;
  const bases = (await store.images()).filter(
    (i) =>
      i.kind === "base" &&
      i.profileKey === profileKey &&
      i.openclawVersion === openclawVersion &&
      i.state === "ready" &&
      i.refusedAt === undefined &&
      // Retention has begun to delete it: no allocation takes it (the store's own rule), so it is not current.
      i.deletingSince === undefined,
  );
  return bases.sort((a, b) => b.createdAt - a.createdAt)[0];
}

export async function warmBaseImage(input: WarmInput): Promise<WarmReport> {
  const started = Date.now();
  const profile = chooseProfile(vercelProfiles(input.config, input.pluginScope), input.profileId);
  const profileKey = profileKeyOf(profile.settings, profile.settings.vcpus);
  const store = ImageStore.inDirectory(input.stateDir);
  const report = (image: ImageRecord, built: boolean, note: string, extra: Partial<WarmReport> = {}) => ({
    profile: profile.id,
    built,
    snapshotId: image.snapshotId,
    baseKey: image.key,
    wallMs: Date.now() - started,
    note,
    ...extra,
  });
  const existing = await baseImageOf(store, profileKey, input.openclawVersion);
  if (existing) {
    return report(
      existing,
      false,
      `a base image of this profile's shape and OpenClaw ${input.openclawVersion} exists; nothing was built`,
    );
  }
  const timings = input.timings ?? DEFAULT_TIMINGS;
  const request = await requestBaseImage(input.stateDir, profileKey, Date.now());
  // Whether our worker took a request (its base step recorded diagnostics): then it may have been another run's,
  // and ours stays for that run's worker. Only when ours took none is our own request withdrawn.
  let tookOne = false;
  try {
    const out = await withWorkerEnvironment(
      { call: input.call, profileId: profile.id, progress: input.progress, signal: input.signal },
      timings,
      async ({ environmentId, leaseId }): Promise<WarmReport | { capturing: string; ids: Partial<WarmReport> }> => {
        const ids = { environmentId, ...(leaseId ? { leaseId } : {}) };
        const step = leaseId ? (await store.diagnostics()).find((d) => d.leaseId === leaseId) : undefined;
        tookOne = step !== undefined;
        const captured = step?.captured ? (await store.images()).find((i) => i.snapshotId === step.imageId) : undefined;
        if (captured) {
          input.progress(`base image ${captured.snapshotId} captured by ${leaseId}`);
          const sizeBytes = await sizeOf(input, profile, captured.snapshotId);
          return report(captured, true, builtNote(step as PreparationDiagnostics), {
            ...ids,
            ...(sizeBytes !== undefined ? { sizeBytes } : {}),
          });
        }
        // Captured elsewhere meanwhile (a cold worker, another images warm), or found current by the provision.
        const other = step ? await store.usable(step.key) : await baseImageOf(store, profileKey, input.openclawVersion);
        // Another worker (another images warm at once) holds the capture: waited for once this worker is gone.
        if (!other && step?.baseCaptureSkipped === CAPTURING_ELSEWHERE) return { capturing: step.key, ids };
        if (other) {
          const why = step?.baseCaptureSkipped ?? "another worker took the request";
          return report(
            other,
            false,
            `the gateway's worker found a current base image (${why}); nothing was built`,
            ids,
          );
        }
        throw new CliError(
          step
            ? `the gateway's worker captured no base image: ${step.baseCaptureSkipped ?? "unknown reason"}`
            : `the gateway's worker ${leaseId ?? environmentId} did not run the base step`,
          step
            ? "Run `openclaw vercel-sandbox images` to see the store"
            : "The running gateway may predate this plugin version: restart it, then run images warm again",
        );
      },
    );
    const done =
      "capturing" in out
        ? await capturedElsewhere(store, out.capturing, timings, (image) =>
            report(
              image,
              false,
              `another worker was capturing it (${CAPTURING_ELSEWHERE}), and this run waited for it; nothing was built`,
              out.ids,
            ),
          )
        : out;
    // The figure is the whole command's, the environment's destroy included.
    return { ...done, wallMs: Date.now() - started };
  } finally {
    if (!tookOne) await withdrawBaseImageRequest(request);
  }
}

/** Waits (bounded, like the worker's readiness) for the base image another worker is capturing under its claim. */
async function capturedElsewhere(
  store: ImageStore,
  key: string,
  timings: EnvironmentTimings,
  done: (image: ImageRecord) => WarmReport,
): Promise<WarmReport> {
  const until = Date.now() + timings.readyTimeoutMs;
  for (;;) {
    const image = await store.usable(key);
    if (image) return done(image);
    if (Date.now() > until) {
      throw new CliError(
        `another worker was capturing the base image of this key and none was ready within ${seconds(timings.readyTimeoutMs)}`,
        "Run `openclaw vercel-sandbox images` to see the store, then images warm again",
      );
    }
    await new Promise((resolve) => setTimeout(resolve, timings.pollMs));
  }
}

function builtNote(step: PreparationDiagnostics): string {
  return `built on the gateway: runtime installed, measured, scrubbed and captured before enrollment (${seconds(step.totalMs)})`;
}

async function sizeOf(input: WarmInput, profile: Extract<ProfileEntry, { ok: true }>, snapshotId: string) {
  try {
    const project = await input.client.project(profile.settings);
    return (await project.findSnapshot(snapshotId))?.sizeBytes;
  } catch (error) {
    input.progress(`the image's size is unknown: ${messageOf(error)}`);
    return undefined;
  }
}

export function renderWarm(report: WarmReport): string {
  const size = report.sizeBytes !== undefined ? `, ${(report.sizeBytes / 1024 / 1024).toFixed(1)} MiB` : "";
  const head = report.built
    ? `Built base image ${report.snapshotId} for profile ${report.profile} in ${seconds(report.wallMs)}${size}.`
    : `Base image ${report.snapshotId} of profile ${report.profile} is current: nothing was built (${seconds(report.wallMs)}).`;
  return [
    head,
    `  key ${report.baseKey.slice(0, 12)}; ${report.note}`,
    ...(report.environmentId ? [`  environment ${report.environmentId} destroyed`] : []),
  ].join("\n");
}
