// Snapshots that outlive one emulator on a data dir the caller keeps (the main job's rerun cache): `save` writes a
// live snapshot's record next to its layer (`snapshots/<id>/record.json`); a later emulator started on the same
// data dir with `restoreSnapshots: [ids]` loads those records (live, unexpired, every layer of the chain on disk)
// and removes everything else under `sandboxes/` and `snapshots/` (a previous run's leftovers: nothing else
// stands on them). Nothing is saved unless asked, so an emulator on a temp dir behaves as before.
import { existsSync } from "node:fs";
import { readdir, readFile, rm, writeFile } from "node:fs/promises";
import path from "node:path";
import { type LayerRef, layerHome } from "./layers.js";
import type { Registry, SnapshotRecord } from "./registry.js";

const RECORD = "record.json";

export class SnapshotNotSavableError extends Error {
  override readonly name = "SnapshotNotSavableError";
}

/** Writes a live snapshot's record so a later emulator on this data dir can restore it. */
export async function saveSnapshot(registry: Registry, dataDir: string, id: string): Promise<void> {
  const snap = registry.liveSnapshot(id);
  if (!snap) throw new SnapshotNotSavableError(`snapshot ${id} is not live`);
  const { dir: _dir, ...record } = snap;
  await writeFile(path.join(dataDir, "snapshots", id, RECORD), `${JSON.stringify(record)}\n`);
}

const isLayer = (v: unknown): v is LayerRef =>
  typeof v === "object" &&
  v !== null &&
  typeof (v as LayerRef).dir === "string" &&
  !(v as LayerRef).dir.includes("..") &&
  typeof (v as LayerRef).idBase === "number";

async function readRecord(dataDir: string, id: string): Promise<SnapshotRecord | undefined> {
  const file = path.join(dataDir, "snapshots", id, RECORD);
  if (!/^snap_[A-Za-z0-9]+$/.test(id) || !existsSync(file)) return undefined;
  try {
    const raw = JSON.parse(await readFile(file, "utf8")) as SnapshotRecord;
    if (raw.id !== id || raw.status !== "created" || !Array.isArray(raw.layers) || !raw.layers.every(isLayer)) {
      return undefined;
    }
    if (raw.expiresAt !== undefined && raw.expiresAt <= Date.now()) return undefined;
    if (!raw.layers.every((l) => existsSync(path.join(dataDir, l.dir)))) return undefined;
    return { ...raw, dir: path.join(dataDir, "snapshots", id) };
  } catch {
    return undefined;
  }
}

/** Loads the saved snapshots among `ids`, removes every other sandbox and snapshot dir; answers the ids loaded. */
export async function restoreSnapshots(registry: Registry, dataDir: string, ids: readonly string[]): Promise<string[]> {
  const restored: SnapshotRecord[] = [];
  for (const id of new Set(ids)) {
    const record = await readRecord(dataDir, id);
    if (record) restored.push(record);
  }
  const kept = new Set(restored.flatMap((s) => s.layers.map(layerHome)));
  for (const entry of await readdir(path.join(dataDir, "snapshots"))) {
    if (!kept.has(`snapshots/${entry}`))
      await rm(path.join(dataDir, "snapshots", entry), { recursive: true, force: true });
  }
  for (const entry of await readdir(path.join(dataDir, "sandboxes"))) {
    await rm(path.join(dataDir, "sandboxes", entry), { recursive: true, force: true });
  }
  for (const record of restored) registry.snapshots.set(record.id, record);
  // A kept layer whose own snapshot was not restored has no record to free it: the sweep frees it with the last
  // chain standing on it.
  const own = new Set(restored.map((s) => `snapshots/${s.id}`));
  for (const home of kept) if (!own.has(home)) registry.unrecordedLayers.add(home);
  return restored.map((s) => s.id);
}
