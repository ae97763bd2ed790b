// The base runtime image of an OpenClaw version, built once per run and shared by its spec files. A cold VM2
// installs the gateway's runtime with npm (31-98 s, most of it CPU); the plugin keeps a box holding just that
// runtime as the base image of its key (src/preparation/base.ts), and every later worker of the key starts from
// it. Each spec file has its own emulator and gateway, so without this each would install the runtime again.
// The first spec file of a run that asks for the base image of a version builds it under the run cache's lock
// (run-cache.ts) as a user would, with `openclaw vercel-sandbox images warm` on a gateway of that version, and
// keeps the snapshot's directory as its emulator saves it for a restart (`saveSnapshot`) with the store's record
// of it; later ones wait for it. A spec file then starts its emulator holding that snapshot (`restoreSnapshots`)
// and writes the record into its gateway's image store under its own profile's key: the same runtime identity
// (core's digests, which the record keeps) under this emulator's profile key (src/preparation/key.ts). The plugin
// uses it exactly as one it captured itself; a record whose key it does not compute (another runtime digest) is
// never used, and that worker starts cold as before. Specs that prove the cold path do not seed.
import { execFile } from "node:child_process";
import { mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { type LocalSandboxApi, startLocalSandboxApi } from "../../src/emulator/index.js";
import { baseKeyOf, profileKeyOf } from "../../src/preparation/key.js";
import { ImageStore } from "../../src/preparation/store.js";
import type { ImageRecord } from "../../src/preparation/types.js";
import { parseSettings } from "../../src/settings/index.js";
import { sharedInRun } from "../support/run-cache.js";
import { TOKEN_ENV } from "./environments.js";

const run = promisify(execFile);
export const SPEC_EMULATOR_PREFIX = "emu-spec-";
const RECORD = "image.json";

const entryOf = (version: string) => `base-image-${version}`;

/**
 * A copy of a snapshot's directory as the emulator wrote it: owners (the sandbox's id range), modes, overlay
 * whiteouts (device nodes) and opaque marks (xattrs) kept, which only cp does (Node's fs.cp keeps no owner). Its
 * files are hard links (the base image is 0.5 GB, 36 000 files): an emulator never writes into a snapshot's layer
 * (a sandbox stacks it read-only; what it changes, an owner shift or a flatten, it does on copies of its own), and
 * removing a link leaves the others. Where links cannot be made (another file system), a full copy.
 */
async function copySnapshotDir(from: string, to: string): Promise<void> {
  const cp = (flags: string) => run("/bin/cp", [flags, "--", from, to], { env: { PATH: "/usr/bin:/bin" } });
  try {
    await cp("-al");
  } catch {
    await rm(to, { recursive: true, force: true });
    await cp("-a");
  }
}

/** An emulator on a data dir of its own, removed with it; `close` ends both. */
export interface SpecEmulator {
  api: LocalSandboxApi;
  dataDir: string;
  /** The base image snapshot it started with (seedVersion's, when the run had one). */
  seeded?: ImageRecord;
  close(): Promise<void>;
}

/**
 * Starts an emulator for a spec. With `seedVersion`, it starts holding the run's base image of that OpenClaw
 * version (restored as the emulator restores its own after a restart), built first if the run has none yet.
 * Outside a run cache (a spec run under another config) it starts empty.
 */
export async function startSpecEmulator(options: { seedVersion?: string } = {}): Promise<SpecEmulator> {
  const dataDir = await mkdtemp(path.join(tmpdir(), SPEC_EMULATOR_PREFIX));
  try {
    const base = options.seedVersion
      ? (await sharedInRun(entryOf(options.seedVersion), (staging) => buildBaseImage(options.seedVersion!, staging)))
          ?.dir
      : undefined;
    let seeded: ImageRecord | undefined;
    if (base) {
      seeded = JSON.parse(await readFile(path.join(base, RECORD), "utf8")) as ImageRecord;
      await mkdir(path.join(dataDir, "snapshots"), { recursive: true });
      await copySnapshotDir(path.join(base, "snapshot"), path.join(dataDir, "snapshots", seeded.snapshotId));
    }
    const api = await startLocalSandboxApi({
      dataDir,
      ...(seeded ? { restoreSnapshots: [seeded.snapshotId] } : {}),
    });
    if (seeded && !api.restored.includes(seeded.snapshotId)) {
      await api.close();
      throw new Error(`the run's base image ${seeded.snapshotId} did not restore into a new emulator`);
    }
    return {
      api,
      dataDir,
      ...(seeded ? { seeded } : {}),
      close: async () => {
        try {
          await api.close();
        } finally {
          await rm(dataDir, { recursive: true, force: true, maxRetries: 3 });
        }
      },
    };
  } catch (error) {
    await rm(dataDir, { recursive: true, force: true, maxRetries: 3 });
    throw error;
  }
}

/**
 * Writes the emulator's seeded base image into the image store of the gateway whose state dir is `stateDir`, keyed
 * for a profile with `settings` (the raw profile settings, as the gateway's config holds them). Returns the record
 * written, or undefined when the emulator holds none.
 */
export async function seedBaseImage(
  stateDir: string,
  settings: Record<string, unknown>,
  emulator: SpecEmulator,
): Promise<ImageRecord | undefined> {
  const base = emulator.seeded;
  if (!base?.runtimeIdentity) return undefined;
  const parsed = parseSettings(settings);
  const profileKey = profileKeyOf(parsed, parsed.vcpus);
  const key = baseKeyOf(profileKey, base.runtimeIdentity);
  const now = Date.now();
  const record: ImageRecord = { ...base, key, baseKey: key, profileKey, createdAt: now, lastUsedAt: now };
  await ImageStore.inDirectory(stateDir).recordImage(record);
  return record;
}

/** Builds the base image of `version` on a gateway of its own (`images warm`) and keeps it in `staging`. */
async function buildBaseImage(version: string, staging: string): Promise<void> {
  const { WorkerGateway, PROFILE } = await import("./worker-gateway.js");
  const builder = new WorkerGateway(version);
  try {
    await builder.start();
    const gw = builder.gw;
    const api = builder.emulator;
    const warm = await gw.oc(["vercel-sandbox", "images", "warm", "--worker-profile", PROFILE, "--json"], {
      timeoutMs: 840_000,
      env: { [TOKEN_ENV]: api.credentials.token },
    });
    if (warm.code !== 0) {
      throw new Error(
        `${gw.describeFailure("images warm for the run's base image", warm)}\n${await gw.gatewayLogTail(80)}`,
      );
    }
    const base = (await ImageStore.inDirectory(gw.stateDir).images()).find(
      (i) => i.kind === "base" && i.state === "ready" && i.runtimeIdentity,
    );
    if (!base) throw new Error(`images warm on openclaw ${version} left no ready base image in the store`);
    await api.saveSnapshot(base.snapshotId);
    await mkdir(staging, { recursive: true });
    await copySnapshotDir(
      path.join(builder.emulatorWorld!.dataDir, "snapshots", base.snapshotId),
      path.join(staging, "snapshot"),
    );
    await writeFile(path.join(staging, RECORD), JSON.stringify(base));
  } finally {
    await builder.dispose();
  }
}
