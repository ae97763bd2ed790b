// The base runtime image between runs (issue 21), as pure data. The plugin on VM1 captures it during message 1's
// cold provision (runtime installed, nothing of any project or lease, scrubbed) and keys it by its base key: the
// digest of the profile's image settings (the Vercel API URL among them) and of the runtime core hands over. At
// the end of a run the job keeps those records and their snapshots; the next run writes them into the new VM1's
// image store before its gateway starts, and the plugin uses one only if its own key matches. The API front's
// address and port are kept too: another URL is another profile key, so the image is offered only when they match.
import type { CachedBase, ReuseRecord } from "./reuse.js";

/** The plugin's store file format version this job writes (src/preparation/store-state.ts, STORE_FORMAT). */
const STORE_VERSION = 1;
const SNAPSHOT_ID = /^snap_[A-Za-z0-9]+$/;
const KEY = /^[0-9a-f]{64}$/;

export type BasePlan = { offer: CachedBase[] } | { none: string };

export function frontOf(url: string): { address: string; port: number } {
  const parsed = new URL(url);
  return { address: parsed.hostname, port: Number(parsed.port) };
}

/** What to offer VM1's store: the kept base images, when this run's API front has the last run's URL. */
export function planBase(
  record: ReuseRecord | undefined,
  front: { address: string; port: number },
  options: { fresh: boolean; available: readonly string[] },
): BasePlan {
  if (options.fresh) return { none: "--fresh" };
  const kept = (record?.base ?? []).filter((b) => options.available.includes(b.snapshotId));
  if (kept.length === 0) return { none: "none kept" };
  const last = record?.front;
  if (!last || last.address !== front.address || last.port !== front.port) {
    return { none: "the API front's URL changed, so the profile key differs" };
  }
  return { offer: kept };
}

/** The image store file VM1's plugin reads at start: the offered base images and nothing else. */
export function seededStore(bases: readonly CachedBase[]): string {
  const images = Object.fromEntries(bases.map((b) => [b.snapshotId, b.record]));
  const state = {
    version: STORE_VERSION,
    images,
    forgotten: {},
    choices: {},
    released: {},
    diagnostics: [],
    captures: {},
  };
  return `${JSON.stringify(state)}\n`;
}

/**
 * The ready base images in a store file VM1's plugin wrote (VM2-independent data of our own plugin, still parsed
 * with bounds): kind `base`, state `ready`, neither refused nor being deleted.
 */
export function readyBases(storeText: string): CachedBase[] {
  let parsed: unknown;
  try {
    parsed = JSON.parse(storeText);
  } catch {
    return [];
  }
  const images = (parsed as { images?: unknown })?.images;
  if (typeof images !== "object" || images === null) return [];
  const found: CachedBase[] = [];
  for (const value of Object.values(images as Record<string, unknown>).slice(0, 512)) {
    const r = value as Record<string, unknown>;
    if (typeof r !== "object" || r === null || r.kind !== "base" || r.state !== "ready") continue;
    if (r.refusedAt !== undefined || r.deletingSince !== undefined) continue;
    if (typeof r.snapshotId !== "string" || !SNAPSHOT_ID.test(r.snapshotId)) continue;
    if (typeof r.key !== "string" || !KEY.test(r.key)) continue;
    found.push({ snapshotId: r.snapshotId, key: r.key, record: r });
  }
  return found;
}

/** The summary's line for the base runtime image. */
export function baseLine(plan: BasePlan, ranRuntimeInstall: boolean, kept: readonly CachedBase[]): string {
  const keptNote =
    kept.length === 0
      ? ""
      : `; kept for the next run: ${kept.map((b) => `${b.snapshotId} (key ${b.key.slice(0, 12)})`).join(", ")}`;
  if ("offer" in plan) {
    const offered = plan.offer.map((b) => `${b.snapshotId} (key ${b.key.slice(0, 12)})`).join(", ");
    const verdict = ranRuntimeInstall
      ? "not used: message 1's VM2 installed the runtime (the plugin's base key differs)"
      : "reused: message 1's VM2 ran no runtime install";
    return `  base runtime image ${offered}: ${verdict}${keptNote}`;
  }
  const built = ranRuntimeInstall ? "built by message 1's VM2 (runtime install)" : "none built";
  return `  base runtime image: ${built}; none offered (${plan.none})${keptNote}`;
}
