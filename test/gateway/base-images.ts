// The base runtime image of an OpenClaw version, built once per run and shared by its spec files. A cold VM2
// installs the gateway's runtime with npm (31-98 s, most of it CPU); the plugin keeps a box holding just that
// runtime as the base image of its key (src/preparation/base.ts), and every later worker of the key starts from
// it. Each spec file has its own emulator and gateway, so without this each would install the runtime again.
// The images-warm spec of the version (images-warm.test.ts) builds it as a user would, with `openclaw
// vercel-sandbox images warm`, holding the run cache's lock for it (run-cache.ts) from before its gateway starts;
// it keeps the snapshot's directory as its emulator saves it for a restart (`saveSnapshot`) with the store's record
// of it. Spec files that need the image wait for it; when that spec is not in the run (a spec run alone) or failed,
// the first of them builds it the same way on a gateway of its own. A spec file then starts its emulator holding
// that snapshot (`restoreSnapshots`) and writes the record into its gateway's image store under its own profile's
// key: the same runtime identity (core's digests, which the record keeps) under this emulator's profile key
// (src/preparation/key.ts). The plugin uses it exactly as one it captured itself; a record whose key it does not
// compute (another runtime digest) is never used, and that worker starts cold as before. Specs that prove the
// cold path do not seed. The image is also kept in the machine cache (machine-cache.ts), keyed by our install
// code and the emulator (machineKeyOf), so a later run on the machine builds none.
import { readFileSync } from "node:fs";
import { mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { type LocalSandboxApi, startLocalSandboxApi } from "../../src/emulator/index.js";
import { baseKeyOf, profileKeyOf } from "../../src/preparation/key.js";
import { ImageStore } from "../../src/preparation/store.js";
import type { ImageRecord } from "../../src/preparation/types.js";
import { parseSettings } from "../../src/settings/index.js";
import { copyTree } from "../support/copy-tree.js";
import { contentKey, treeParts } from "../support/machine-cache.js";
import { type Hold, holdInRun, sharedInRun } from "../support/run-cache.js";
import { TOKEN_ENV } from "./environments.js";
import { REPO_ROOT } from "./openclaw.js";

export const SPEC_EMULATOR_PREFIX = "emu-spec-";
const RECORD = "image.json";

const entryOf = (version: string) => `base-image-${version}`;

/**
 * What a kept base image depends on besides core's runtime (whose digests the plugin checks itself, through the
 * record's key): our own install and capture code (the bootstrap program, preparation) and the emulator that holds
 * the snapshot (its layer format), read from this checkout, and the Node that runs inside the sandboxes.
 */
function machineKeyOf(version: string): string {
  const tree = (relative: string) => treeParts(path.join(REPO_ROOT, relative));
  return contentKey(
    version,
    process.version,
    ...tree("src/provider/enrollment/program"),
    ...tree("src/preparation"),
    ...tree("src/emulator"),
  );
}

/** Whether a kept base image's snapshot lives another day (the emulator restores no expired snapshot). */
function unexpired(dir: string): boolean {
  try {
    const saved = JSON.parse(readFileSync(path.join(dir, "snapshot", "record.json"), "utf8")) as { expiresAt?: number };
    return saved.expiresAt === undefined || saved.expiresAt > Date.now() + 24 * 60 * 60_000;
  } catch {
    return false;
  }
}

/**
 * The run cache's directory of the base image of `version`, built first if needed. A build that fails (images
 * warm broken on that release, which its images-warm spec reports) leaves the caller without one: its workers
 * start cold, as they would without the run cache.
 */
async function runBaseImage(version: string): Promise<string | undefined> {
  try {
    const shared = await sharedInRun(entryOf(version), (staging) => buildBaseImage(version, staging), {
      machineKey: machineKeyOf(version),
      usable: unexpired,
    });
    return shared?.dir;
  } catch (error) {
    process.stderr.write(
      `[base image] none for openclaw ${version}, workers start cold: ${(error as Error).message}\n`,
    );
    return undefined;
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
 * Outside a run cache (a spec run under another config) it starts empty. `token`: the bearer token it requires
 * (another emulator's, so one gateway variable serves profiles on both), by default a random one.
 */
export async function startSpecEmulator(options: { seedVersion?: string; token?: string } = {}): Promise<SpecEmulator> {
  const dataDir = await mkdtemp(path.join(tmpdir(), SPEC_EMULATOR_PREFIX));
  try {
    const version = options.seedVersion;
    const base = version ? await runBaseImage(version) : undefined;
    let seeded: ImageRecord | undefined;
    if (base) {
      seeded = JSON.parse(await readFile(path.join(base, RECORD), "utf8")) as ImageRecord;
      await mkdir(path.join(dataDir, "snapshots"), { recursive: true });
      await copyTree(path.join(base, "snapshot"), path.join(dataDir, "snapshots", seeded.snapshotId));
    }
    const api = await startLocalSandboxApi({
      dataDir,
      ...(options.token ? { token: options.token } : {}),
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

/**
 * The right to make the run's base image of `version` (run-cache.ts): the images-warm spec takes it before its
 * gateway starts, so that spec files needing the image wait for the one `images warm` builds there instead of
 * building another. Undefined when the run has it already (or the machine cache had it): nothing to keep then.
 */
export function holdBaseImage(version: string): Promise<Hold | undefined> {
  return holdInRun(entryOf(version), { machineKey: machineKeyOf(version), usable: unexpired });
}

/**
 * Keeps, in `staging`, the ready base image the gateway whose state dir is `stateDir` has in its store, as
 * `emulator` holds it (its snapshot saved for a restart, copied with its store record).
 */
export async function keepBaseImage(version: string, stateDir: string, emulator: SpecEmulator, staging: string) {
  const base = (await ImageStore.inDirectory(stateDir).images()).find(
    (i) => i.kind === "base" && i.state === "ready" && i.runtimeIdentity,
  );
  if (!base) throw new Error(`the gateway of openclaw ${version} has no ready base image in its store`);
  await emulator.api.saveSnapshot(base.snapshotId);
  await mkdir(staging, { recursive: true });
  // Links: the cache's copy is never a sandbox's (startSpecEmulator copies it whole into each emulator).
  await copyTree(path.join(emulator.dataDir, "snapshots", base.snapshotId), path.join(staging, "snapshot"), {
    links: true,
  });
  await writeFile(path.join(staging, RECORD), JSON.stringify(base));
}

/**
 * Builds the base image of `version` on a gateway of its own (`images warm`) and keeps it in `staging`: what a spec
 * file needing it does when the images-warm spec of its version did not make it (not in this run, or failed).
 */
async function buildBaseImage(version: string, staging: string): Promise<void> {
  const { WorkerGateway, PROFILE } = await import("./worker-gateway.js");
  const builder = new WorkerGateway(version, { seed: false });
  try {
    await builder.start();
    const gw = builder.gw;
    const warm = await gw.oc(["vercel-sandbox", "images", "warm", "--worker-profile", PROFILE, "--json"], {
      timeoutMs: 840_000,
      env: { [TOKEN_ENV]: builder.emulator.credentials.token },
    });
    if (warm.code !== 0) {
      throw new Error(
        `${gw.describeFailure("images warm for the run's base image", warm)}\n${await gw.gatewayLogTail(80)}`,
      );
    }
    await keepBaseImage(version, gw.stateDir, builder.emulatorWorld!, staging);
  } finally {
    await builder.dispose();
  }
}
