// `openclaw vercel-sandbox images warm [--worker-profile id]` (not `--profile`: OpenClaw's root option of that
// name selects a state dir and never reaches a plugin command): builds the base runtime image of a profile (its
// runtime digest and sandbox shape, src/preparation/key.ts) ahead of the first dispatch, so that a new
// project's first worker starts from it and installs no runtime. It runs the cold provision's own base step
// (preparation/base.ts: runtime install, measurement, scrub, capture, record) on a builder sandbox of its own:
// created through the client seam with the profile's shape and a worker's egress (deny-all at create, then the
// gateway and the package registry for the runtime install), tagged with the profile's scope like a lease (so
// `gc` can prove it unowned if this process dies), and deleted afterwards on success, failure and Ctrl-C. The
// store's capture claim keeps it from running beside another capture of the same key (a cold worker's or
// another `images warm`'s). A current base image of the key makes it a no-op that says so.
import { randomUUID } from "node:crypto";
import type { NodeRuntimePreparation } from "../infra/index.js";
import { forgetSecrets, registerSecret } from "../infra/index.js";
import {
  baseKeyOf,
  type ImageRecord,
  ImageStore,
  installBase,
  type PreparationDiagnostics,
  profileKeyOf,
} from "../preparation/index.js";
import {
  allocate,
  BootstrapEnroller,
  createRequest,
  egressPolicy,
  gatewayHostOf,
  imageExpirationMs,
  releaseSandbox,
} from "../provider/index.js";
import type { VercelClient, VercelProject } from "../vercel/index.js";
import { CliError } from "./commands.js";
import { type ProfileEntry, vercelProfiles } from "./profiles.js";

const seconds = (ms: number) => `${(ms / 1000).toFixed(1)} s`;

/** Core's runtime for a worker of the profile: the archives a cold worker would install, with their digests. */
export type RuntimeSource = (profileId: string, signal: AbortSignal) => Promise<NodeRuntimePreparation>;

export interface WarmInput {
  /** `--worker-profile`; without it the one vercel-sandbox profile of the config. */
  profileId?: string;
  /** The gateway's config (`cloudWorkers.profiles`). */
  config: unknown;
  /** The scope a profile without `scope` uses. */
  pluginScope: string;
  stateDir: string | undefined;
  client: VercelClient;
  runtime: RuntimeSource;
  /** One line per phase as it ends. */
  progress: (line: string) => void;
  /** Ctrl-C: the builder is still deleted. */
  signal: AbortSignal;
}

export interface WarmReport {
  profile: string;
  /** Whether this run captured the image (false: a current one existed). */
  built: boolean;
  baseKey: string;
  snapshotId: string;
  /** The builder sandbox, deleted before the command returned (absent when nothing was built). */
  builder?: string;
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

/** The profile's settings as written in the config: the ownership tag fingerprints them, as a worker's does. */
function rawSettingsOf(config: unknown, profileId: string): unknown {
  const profiles = (config as { cloudWorkers?: { profiles?: Record<string, { settings?: unknown }> } } | null)
    ?.cloudWorkers?.profiles;
  return profiles?.[profileId]?.settings;
}

export async function warmBaseImage(input: WarmInput): Promise<WarmReport> {
  const started = Date.now();
  const profile = chooseProfile(vercelProfiles(input.config, input.pluginScope), input.profileId);
  const { settings } = profile;
  const vcpus = settings.vcpus;
  const profileKey = profileKeyOf(settings, vcpus);
  const allocation = allocate(profile.scope, `vercel-sandbox-images-warm:${randomUUID()}`);
  const owner = allocation.leaseId;
  const runtime = await input.runtime(profile.id, input.signal);
  try {
    // The archives' bearer tokens travel to the builder for the install: redacted on every path out.
    registerSecret(runtime.nodeBootstrap.token, owner);
    registerSecret(runtime.workerBundle.token, owner);
    const baseKey = baseKeyOf(profileKey, runtime);
    const store = ImageStore.inDirectory(input.stateDir);
    const report = (image: ImageRecord, built: boolean, note: string, extra: Partial<WarmReport> = {}) => ({
      profile: profile.id,
      built,
      baseKey,
      snapshotId: image.snapshotId,
      wallMs: Date.now() - started,
      note,
      ...extra,
    });
    const existing = await store.usable(baseKey);
    if (existing) {
      return report(existing, false, "a current base image of this runtime and shape exists; nothing was built");
    }
    if (!(await store.claimCapture(baseKey, owner, Date.now()))) {
      throw new CliError(
        "another worker or `images warm` is capturing the base image of this runtime and shape right now",
        "Run images warm again once it finishes; `openclaw vercel-sandbox images` lists it when it is done",
      );
    }
    try {
      // Checked again under the claim: a capture that just finished elsewhere needs no builder.
      const finished = await store.usable(baseKey);
      if (finished)
        return report(finished, false, "a base image of this key was just captured elsewhere; nothing was built");
      return await build({ ...input, store, owner, runtime, baseKey, profileKey, allocation, profile, report });
    } finally {
      await store.finishCapture(baseKey, owner);
    }
  } finally {
    forgetSecrets(owner);
  }
}

type BuildInput = Omit<WarmInput, "runtime"> & {
  store: ImageStore;
  owner: string;
  runtime: NodeRuntimePreparation;
  baseKey: string;
  profileKey: string;
  allocation: ReturnType<typeof allocate>;
  profile: Extract<ProfileEntry, { ok: true }>;
  report: (image: ImageRecord, built: boolean, note: string, extra?: Partial<WarmReport>) => WarmReport;
};

async function build(input: BuildInput): Promise<WarmReport> {
  const { store, owner, allocation, profile, signal } = input;
  const { settings } = profile;
  const project = await input.client.project(settings);
  const progress = (step: string, ms: number) => input.progress(`${step}: ${seconds(ms)}`);
  const { runtime: sandboxRuntime, ...shape } = createRequest(
    allocation,
    settings,
    rawSettingsOf(input.config, profile.id),
    settings.vcpus,
  );
  const started = Date.now();
  try {
    const sandbox = await project.create({ ...shape, runtime: sandboxRuntime }, signal);
    progress(`builder ${allocation.sandboxName} created`, Date.now() - started);
    const enroller = new BootstrapEnroller({ logger: { warn: (m) => input.progress(m) } });
    const base = await installBase({
      leaseId: owner,
      project,
      sandbox,
      box: project.box(sandbox),
      store,
      profileKey: input.profileKey,
      baseKey: input.baseKey,
      runtime: input.runtime,
      imageExpirationMs: imageExpirationMs(settings.images.unusedForMs),
      installRuntime: (box, runtime, s) => enroller.prepareRuntime({ leaseId: owner, box, runtime, signal: s }),
      openEgress: async ({ sandbox: current, runtimeUrl }) => {
        if (settings.networkPolicy === "allow-all") return;
        const gateway = runtimeUrl ? gatewayHostOf(runtimeUrl) : undefined;
        await project.updateNetworkPolicy(
          current,
          egressPolicy(settings, gateway ? [gateway] : [], "bootstrap"),
          signal,
        );
      },
      progress,
      signal,
      current: () => signal.throwIfAborted(),
      now: Date.now,
      restore: false,
    });
    if (!base.captured) {
      const exists = await store.usable(input.baseKey);
      if (exists) return input.report(exists, false, `nothing was built: ${base.skipped ?? "a base image exists"}`);
      throw new CliError(
        `no base image was captured: ${base.skipped ?? "unknown reason"}`,
        "Run `openclaw vercel-sandbox images` to see the store",
      );
    }
    await store.recordDiagnostics(diagnosticsOf(input, base.captured, Date.now() - started));
    const sizeBytes = await sizeOf(project, base.captured.snapshotId);
    return input.report(base.captured, true, "built the base runtime image", {
      builder: allocation.sandboxName,
      ...(sizeBytes !== undefined ? { sizeBytes } : {}),
    });
  } finally {
    // Always (a create whose answer was lost may have made it), and not with `signal`: after Ctrl-C the builder
    // is deleted all the same. The snapshots warm images hold are retained.
    const deleting = Date.now();
    await releaseSandbox(project, allocation.sandboxName, () => store.retainedSnapshotIds());
    progress(`builder ${allocation.sandboxName} deleted`, Date.now() - deleting);
  }
}

async function sizeOf(project: VercelProject, snapshotId: string): Promise<number | undefined> {
  try {
    return (await project.findSnapshot(snapshotId))?.sizeBytes;
  } catch {
    return undefined;
  }
}

/** What `images` shows of the build, beside the workers' preparations. */
function diagnosticsOf(input: BuildInput, image: ImageRecord, totalMs: number): PreparationDiagnostics {
  return {
    leaseId: input.owner,
    at: image.createdAt,
    key: input.baseKey,
    projectKey: "",
    baseCommit: "",
    recipe: { source: "none", identity: "", notes: ["images warm: a builder sandbox of its own"], warnings: [] },
    start: "cold",
    event: "initial",
    phases: [],
    baseImageId: image.snapshotId,
    imageId: image.snapshotId,
    captured: true,
    totalMs,
  };
}

export function renderWarm(report: WarmReport): string {
  const size = report.sizeBytes !== undefined ? `, ${(report.sizeBytes / 1024 / 1024).toFixed(1)} MiB` : "";
  const head = report.built
    ? `Built base image ${report.snapshotId} for profile ${report.profile} in ${seconds(report.wallMs)}${size}.`
    : `Base image ${report.snapshotId} of profile ${report.profile} is current: nothing was built (${seconds(report.wallMs)}).`;
  return [
    head,
    `  key ${report.baseKey.slice(0, 12)}; ${report.note}`,
    ...(report.builder ? [`  builder sandbox ${report.builder} deleted`] : []),
  ].join("\n");
}

/**
 * The runtime source of the CLI on OpenClaw 2026.9.x: core hands a provider the node runtime (the archives and
 * their one-time bearer tokens) only inside a provision it runs, so the CLI alone has none to install.
 */
export const runtimeOutsideProvision: RuntimeSource = async () => {
  throw new CliError(
    "this gateway hands a worker's node runtime to its provider only inside a provision, so `images warm` has no runtime to install from this CLI",
    "Dispatch once to any project: its cold worker captures the base image right after the runtime install, and every later new project starts from it",
  );
};
