// `images warm` asking the running gateway for a base image (issue 21). On OpenClaw 2026.9.x core hands a
// provider the node runtime (archives and one-time tokens) only inside a provision it runs, so the CLI builds
// the image through core: it leaves a request for the profile's shape (its profile key) beside the image store,
// then calls `environments.create`. The first provision of that shape without a project that creates its
// sandbox takes a request (atomically: one taker each) and runs the base step (base.ts) right after the create,
// before enrollment. Each run leaves a request file of its own, so two runs of one shape at once ask for two
// base steps and one run's withdrawal never removes the other's. A request is published complete (written
// aside, then renamed into place), so a taker never reads one half-written. A request nobody took expires, so a
// failed or interrupted `images warm` leaves no lasting effect; the CLI also withdraws its own when its worker
// took none. A request holds no secret.
import { randomUUID } from "node:crypto";
import { mkdir, readdir, readFile, rename, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";

/** How long a request waits for its provision. */
export const BASE_REQUEST_TTL_MS = 15 * 60_000;

const KEY = /^[0-9a-f]{64}$/;
const ID = /^[0-9a-f-]{36}$/;

/** One run's request: withdraw it with `withdrawBaseImageRequest`. */
export interface BaseImageRequest {
  readonly file: string;
}

function dirOf(stateDir: string): string {
  return join(stateDir, "vercel-sandbox", "base-requests");
}

function assertKey(profileKey: string): void {
  if (!KEY.test(profileKey)) throw new Error("a profile key is 64 lowercase hex digits");
}

export async function requestBaseImage(stateDir: string, profileKey: string, now: number): Promise<BaseImageRequest> {
  assertKey(profileKey);
  const dir = dirOf(stateDir);
  await mkdir(dir, { recursive: true, mode: 0o700 });
  const id = randomUUID();
  const file = join(dir, `${profileKey}.${id}.json`);
  const aside = join(dir, `.writing-${id}`);
  await writeFile(aside, JSON.stringify({ profileKey, expiresAt: now + BASE_REQUEST_TTL_MS }), { mode: 0o600 });
  await rename(aside, file);
  return { file };
}

/** Removes this run's request if no provision took it. */
export async function withdrawBaseImageRequest(request: BaseImageRequest): Promise<void> {
  await rm(request.file, { force: true });
}

/**
 * Whether a live request for the shape was there; the one taken is gone afterwards (each request has one taker),
 * and so is every expired or unreadable one met on the way.
 */
export async function takeBaseImageRequest(
  stateDir: string | undefined,
  profileKey: string,
  now: number,
): Promise<boolean> {
  if (!stateDir) return false;
  assertKey(profileKey);
  const dir = dirOf(stateDir);
  const names = await readdir(dir).catch((error: NodeJS.ErrnoException) => {
    if (error.code === "ENOENT") return [] as string[];
    throw error;
  });
  for (const name of names) {
    const parts = name.split(".");
    if (parts.length !== 3 || parts[0] !== profileKey || !ID.test(parts[1] ?? "") || parts[2] !== "json") continue;
    if (await takeOne(join(dir, name), profileKey, now)) return true;
  }
  return false;
}

async function takeOne(file: string, profileKey: string, now: number): Promise<boolean> {
  const taken = `${file}.taken-${randomUUID()}`;
  try {
    await rename(file, taken);
  } catch (error) {
    // Another provision took it first.
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return false;
    throw error;
  }
  try {
    const text = await readFile(taken, "utf8");
    if (text.length > 1024) return false;
    const request = JSON.parse(text) as { profileKey?: unknown; expiresAt?: unknown } | null;
    return request?.profileKey === profileKey && typeof request.expiresAt === "number" && request.expiresAt > now;
  } catch {
    return false;
  } finally {
    await rm(taken, { force: true });
  }
}
