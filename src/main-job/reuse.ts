// What a rerun of the main job may reuse (issue 21), as pure data. VM1's image is two layers, each keyed by the
// digest of everything that went into it: the gateway layer (the pinned gateway installed from the registry, on
// this runtime and Node) and, on top of it, the plugin layer (the base config and this checkout's packed plugin
// installed the way a user installs it), both captured in builder sandboxes before any gateway ran, so before any
// token existed. A rerun whose key matches reuses a layer; a changed input rebuilds that layer and the ones above
// it (the plugin layer's inputs name the gateway layer's key), and the plan names the inputs that changed;
// `--fresh` builds regardless.
import { createHash } from "node:crypto";

/** Bump when how VM1's image is built changes (vm1.ts's install steps), so older images are not reused. */
export const VM1_IMAGE_FORMAT = 2;

/** What an image layer is made of: digests and versions, never a secret. */
export type ImageInputs = Record<string, string | number>;

/** The gateway layer's inputs. */
export interface GatewayImageInputs extends ImageInputs {
  format: number;
  /** The pinned gateway (`openclaw@<version>` from the registry). */
  openclaw: string;
  /** The sandbox runtime VM1 runs on. */
  runtime: string;
  /** The Node the emulator puts first on the sandbox PATH (this process's). */
  node: string;
}

/** The plugin layer's inputs. */
export interface PluginImageInputs extends ImageInputs {
  /** The key of the gateway layer it is built on. */
  gateway: string;
  /** sha256 of the packed plugin (`npm pack` of this checkout's build: byte-identical for unchanged sources). */
  plugin: string;
  /** sha256 of the config written before the plugin install, its per-run origin left out. */
  baseConfig: string;
  /** Codex mode: the Codex plugin installed from the registry beside it ("" in worker-turn mode). */
  codex: string;
}

export interface CachedImage {
  key: string;
  snapshotId: string;
  inputs: ImageInputs;
  builtAt: string;
}

/** A base runtime image the plugin on VM1 captured (its store record, as the plugin wrote it) and its base key. */
export interface CachedBase {
  snapshotId: string;
  key: string;
  record: Record<string, unknown>;
}

/** The cache's record: `<cache dir>/images.json`. */
export interface ReuseRecord {
  format: 1;
  /** VM1's gateway layer. */
  gateway?: CachedImage;
  /** VM1's plugin layer, on the gateway layer: what VM1 is created from. */
  vm1?: CachedImage;
  /** The API front VM1 called (its URL is part of the base images' profile key). */
  front?: { address: string; port: number };
  base?: CachedBase[];
}

export type ImagePlan = { reuse: CachedImage } | { build: true; key: string; why: string };

export const sha256 = (value: string | Buffer) => createHash("sha256").update(value).digest("hex");

export function imageKey(inputs: ImageInputs): string {
  const ordered = Object.fromEntries(Object.entries(inputs).sort(([a], [b]) => a.localeCompare(b)));
  return sha256(JSON.stringify(ordered));
}

/** The inputs whose value differs between two builds, by name ("format" alone when they name other inputs). */
export function changedInputs(before: ImageInputs, now: ImageInputs): string[] {
  const [was, is] = [Object.keys(before).sort(), Object.keys(now).sort()];
  if (was.join() !== is.join()) return ["format"];
  return is.filter((name) => before[name] !== now[name]);
}

/**
 * Reuse a layer when the record holds one of this key that the emulator still has (`available`: the ids it
 * restored); otherwise build it, saying why.
 */
export function planImage(
  cached: CachedImage | undefined,
  inputs: ImageInputs,
  options: { fresh: boolean; available: readonly string[] },
): ImagePlan {
  const key = imageKey(inputs);
  if (options.fresh) return { build: true, key, why: "--fresh" };
  if (!cached) return { build: true, key, why: "nothing cached" };
  if (cached.key !== key) {
    return { build: true, key, why: `changed: ${changedInputs(cached.inputs, inputs).join(", ") || "format"}` };
  }
  if (!options.available.includes(cached.snapshotId)) {
    return { build: true, key, why: `the cached image ${cached.snapshotId} is gone` };
  }
  return { reuse: cached };
}

/** The snapshot ids the record asks the emulator to keep (none with --fresh: the cache is discarded). */
export function keptSnapshots(record: ReuseRecord | undefined, fresh: boolean): string[] {
  if (fresh || !record) return [];
  const layers = [record.gateway, record.vm1].flatMap((image) => (image ? [image.snapshotId] : []));
  return [...layers, ...(record.base ?? []).map((b) => b.snapshotId)];
}

/** Reads a record's JSON; anything not of this shape counts as no record (the cache is rebuilt). */
export function parseRecord(text: string | undefined): ReuseRecord | undefined {
  if (text === undefined) return undefined;
  try {
    const raw = JSON.parse(text) as ReuseRecord;
    if (raw?.format !== 1) return undefined;
    const isImage = (image: CachedImage | undefined) =>
      image === undefined ||
      (typeof image.key === "string" &&
        /^snap_[A-Za-z0-9]+$/.test(image.snapshotId) &&
        typeof image.inputs === "object" &&
        image.inputs !== null &&
        typeof image.builtAt === "string");
    // The front is listened on again (api-front.ts): a port that is no port would fail the run, not the cache.
    const front = raw.front;
    const frontOk =
      front === undefined ||
      (typeof front === "object" &&
        front !== null &&
        typeof front.address === "string" &&
        front.address.length <= 64 &&
        Number.isInteger(front.port) &&
        front.port > 0 &&
        front.port < 65536);
    const ok = isImage(raw.gateway) && isImage(raw.vm1) && frontOk;
    const base = raw.base;
    const baseOk =
      base === undefined ||
      (Array.isArray(base) &&
        base.every(
          (b) =>
            /^snap_[A-Za-z0-9]+$/.test(b?.snapshotId) &&
            typeof b.key === "string" &&
            typeof b.record === "object" &&
            b.record !== null,
        ));
    return ok && baseOk ? raw : undefined;
  } catch {
    return undefined;
  }
}

/** The summary's line for one of VM1's image layers. */
export function reuseLine(layer: string, plan: ImagePlan, capturedId?: string): string {
  if ("reuse" in plan) {
    return `  reused: ${layer} ${plan.reuse.snapshotId} (key ${plan.reuse.key.slice(0, 12)}, built ${plan.reuse.builtAt})`;
  }
  const kept = capturedId ? `; captured as ${capturedId} for the next run` : "";
  return `  built: ${layer} (key ${plan.key.slice(0, 12)}; ${plan.why})${kept}`;
}
