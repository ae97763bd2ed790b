// What a rerun of the main job may reuse (issue 21), as pure data: VM1's image (a snapshot of a sandbox with the
// pinned gateway installed and this checkout's packed plugin installed the way a user installs it, captured
// before any gateway ran, so before any token existed on it) is keyed by the digest of everything that went
// into it. A rerun whose key matches reuses the image; any changed input builds a new one and the plan names the
// inputs that changed; `--fresh` builds regardless.
import { createHash } from "node:crypto";

/** Bump when how VM1's image is built changes (vm1.ts's install steps, the base config), so older images are not reused. */
export const VM1_IMAGE_FORMAT = 1;

/** Everything VM1's image is made of; each is a digest or a version, never a secret. */
export interface Vm1ImageInputs {
  format: number;
  /** The pinned gateway (`openclaw@<version>` from the registry). */
  openclaw: string;
  /** sha256 of the packed plugin (`npm pack` of this checkout's build: byte-identical for unchanged sources). */
  plugin: string;
  /** The sandbox runtime VM1 runs on. */
  runtime: string;
  /** The Node the emulator puts first on the sandbox PATH (this process's). */
  node: string;
  /** sha256 of the config written before the plugin install, its per-run origin left out. */
  baseConfig: string;
}

export interface CachedImage {
  key: string;
  snapshotId: string;
  inputs: Vm1ImageInputs;
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
  vm1?: CachedImage;
  /** The API front VM1 called (its URL is part of the base images' profile key). */
  front?: { address: string; port: number };
  base?: CachedBase[];
}

export type Vm1Plan = { reuse: CachedImage } | { build: true; key: string; why: string };

export const sha256 = (value: string | Buffer) => createHash("sha256").update(value).digest("hex");

export function vm1ImageKey(inputs: Vm1ImageInputs): string {
  const ordered = Object.fromEntries(Object.entries(inputs).sort(([a], [b]) => a.localeCompare(b)));
  return sha256(JSON.stringify(ordered));
}

/** The inputs whose value differs between two builds, by name. */
export function changedInputs(before: Vm1ImageInputs, now: Vm1ImageInputs): string[] {
  const names = new Set([...Object.keys(before), ...Object.keys(now)]) as Set<keyof Vm1ImageInputs>;
  return [...names].filter((name) => before[name] !== now[name]).sort();
}

/**
 * Reuse VM1's image when the record holds one of this key that the emulator still has (`available`: the ids it
 * restored); otherwise build, saying why.
 */
export function planVm1(
  record: ReuseRecord | undefined,
  inputs: Vm1ImageInputs,
  options: { fresh: boolean; available: readonly string[] },
): Vm1Plan {
  const key = vm1ImageKey(inputs);
  if (options.fresh) return { build: true, key, why: "--fresh" };
  const cached = record?.vm1;
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
  return [...(record.vm1 ? [record.vm1.snapshotId] : []), ...(record.base ?? []).map((b) => b.snapshotId)];
}

/** Reads a record's JSON; anything not of this shape counts as no record (the cache is rebuilt). */
export function parseRecord(text: string | undefined): ReuseRecord | undefined {
  if (text === undefined) return undefined;
  try {
    const raw = JSON.parse(text) as ReuseRecord;
    if (raw?.format !== 1) return undefined;
    const vm1 = raw.vm1;
    const ok =
      vm1 === undefined ||
      (typeof vm1.key === "string" &&
        /^snap_[A-Za-z0-9]+$/.test(vm1.snapshotId) &&
        typeof vm1.inputs === "object" &&
        vm1.inputs !== null);
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

/** The summary's line for VM1's image. */
export function reuseLine(plan: Vm1Plan, capturedId?: string): string {
  if ("reuse" in plan) {
    return `  reused: VM1's image ${plan.reuse.snapshotId} (key ${plan.reuse.key.slice(0, 12)}, built ${plan.reuse.builtAt})`;
  }
  const kept = capturedId ? `; captured as ${capturedId} for the next run` : "";
  return `  built: VM1's image (key ${plan.key.slice(0, 12)}; ${plan.why})${kept}`;
}
