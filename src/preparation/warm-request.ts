// `images warm` asking the running gateway for a base image (issue 21). On OpenClaw 2026.9.x core hands a
// provider the node runtime (archives and one-time tokens) only inside a provision it runs, so the CLI builds
// the image through core: it leaves a request for the profile's shape (its profile key) beside the image store,
// then calls `environments.create`. The first provision of that shape without a project that creates its
// sandbox takes the request (atomically: one taker) and runs the base step (base.ts) right after the create,
// before enrollment. A request nobody took expires, so a failed or interrupted `images warm` leaves no lasting
// effect; the CLI also withdraws its own on every path out. A request holds no secret.
import { randomUUID } from "node:crypto";
import { mkdir, readFile, rename, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";

/** How long a request waits for its provision. */
export const BASE_REQUEST_TTL_MS = 15 * 60_000;

const KEY = /^[0-9a-f]{64}$/;

function fileOf(stateDir: string, profileKey: string): string {
  if (!KEY.test(profileKey)) throw new Error("a profile key is 64 lowercase hex digits");
  return join(stateDir, "vercel-sandbox", "base-requests", `${profileKey}.json`);
}

export async function requestBaseImage(stateDir: string, profileKey: string, now: number): Promise<void> {
  const file = fileOf(stateDir, profileKey);
  await mkdir(join(file, ".."), { recursive: true, mode: 0o700 });
  await writeFile(file, JSON.stringify({ profileKey, expiresAt: now + BASE_REQUEST_TTL_MS }), { mode: 0o600 });
}

export async function withdrawBaseImageRequest(stateDir: string, profileKey: string): Promise<void> {
  await rm(fileOf(stateDir, profileKey), { force: true });
}

/** Whether a live request for the shape was there; it is gone afterwards either way (only one caller gets true). */
export async function takeBaseImageRequest(
  stateDir: string | undefined,
  profileKey: string,
  now: number,
): Promise<boolean> {
  if (!stateDir) return false;
  const file = fileOf(stateDir, profileKey);
  const taken = `${file}.${randomUUID()}`;
  try {
    await rename(file, taken);
  } catch (error) {
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
