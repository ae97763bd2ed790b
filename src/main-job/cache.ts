// The main job's rerun cache on this machine: `<checkout>/.cache/main-job/` (gitignored) holds the emulator's data
// dir (its snapshot store: VM1's image survives the run; every sandbox and every other snapshot is still deleted)
// and `images.json`, the key → snapshot record (reuse.ts). One run at a time uses it: a second job while the
// first runs gets no cache (a temp data dir, as before). `--fresh` discards it before the run.
import { randomBytes } from "node:crypto";
import { closeSync, linkSync, openSync, readFileSync, renameSync, rmSync, writeSync } from "node:fs";
import { mkdir, readdir, readFile, rename, rm, writeFile } from "node:fs/promises";
import path from "node:path";
import { isAlive } from "../infra/index.js";
import { packageRoot } from "./package.js";
import { parseRecord, type ReuseRecord } from "./reuse.js";

export interface RerunCache {
  dir: string;
  /** The emulator's data dir, kept between runs. */
  emulatorDir: string;
  fresh: boolean;
  /** What the last run left (undefined: nothing, or discarded by --fresh). */
  record: ReuseRecord | undefined;
  save(record: ReuseRecord): Promise<void>;
  /** Lets the next run use the cache. */
  release(): Promise<void>;
}

export const defaultCacheDir = (name = "main-job") => path.join(packageRoot(), ".cache", name);

/** Takes the cache for this run; undefined when another live job holds it. */
export async function openCache(dir: string, fresh: boolean): Promise<RerunCache | undefined> {
  await mkdir(dir, { recursive: true });
  const lock = path.join(dir, "lock");
  if (!take(lock)) return undefined;
  const emulatorDir = path.join(dir, "emulator");
  const recordFile = path.join(dir, "images.json");
  if (fresh) {
    await rm(emulatorDir, { recursive: true, force: true });
    await rm(recordFile, { force: true });
  }
  await pruneIdRanges(emulatorDir);
  const record = parseRecord(await readFile(recordFile, "utf8").catch(() => undefined));
  return {
    dir,
    emulatorDir,
    fresh,
    record,
    save: async (next) => {
      const staging = `${recordFile}.${process.pid}`;
      await writeFile(staging, `${JSON.stringify(next, null, 2)}\n`);
      await rename(staging, recordFile);
    },
    // Only our own lock: one taken over meanwhile (this process seemed dead to another run) is that run's.
    release: async () => {
      if (readPid(lock) === String(process.pid)) await rm(lock, { force: true });
    },
  };
}

/**
 * The emulator builds a small skeleton per sandbox id range (`image/<key>/ids-<base>`, about 1 MB) and ranges are
 * random per sandbox: a kept data dir would gain a few per run. None is in use between runs (we hold the lock).
 */
async function pruneIdRanges(emulatorDir: string): Promise<void> {
  const images = path.join(emulatorDir, "image");
  for (const key of await readdir(images).catch(() => [] as string[])) {
    for (const entry of await readdir(path.join(images, key)).catch(() => [] as string[])) {
      if (entry.startsWith("ids-")) await rm(path.join(images, key, entry), { recursive: true, force: true });
    }
  }
}

/**
 * The lock file holds its owner's pid; a dead owner's lock is taken over. Two runs may find the same dead lock at
 * once: each moves it aside (one rename wins) and checks that what it moved is the dead lock it read, so neither
 * removes a lock the other has just taken (one moved by mistake is linked back).
 */
function take(lock: string): boolean {
  for (let attempt = 0; attempt < 3; attempt++) {
    try {
      const fd = openSync(lock, "wx");
      writeSync(fd, String(process.pid));
      closeSync(fd);
      return true;
    } catch {
      const seen = readPid(lock);
      const owner = Number.parseInt(seen, 10);
      if (Number.isSafeInteger(owner) && owner > 0 && isAlive(owner)) return false;
      const aside = `${lock}.stale-${process.pid}-${randomBytes(4).toString("hex")}`;
      try {
        renameSync(lock, aside);
      } catch {
        continue;
      }
      const moved = readPid(aside);
      if (moved !== seen) {
        try {
          linkSync(aside, lock);
        } catch {
          // Another run holds it by now.
        }
        rmSync(aside, { force: true });
        return false;
      }
      rmSync(aside, { force: true });
    }
  }
  return false;
}

function readPid(file: string): string {
  try {
    return readFileSync(file, "utf8");
  } catch {
    return "";
  }
}
