// Shared test harness: one emulator per test file, and both SDK versions the project supports,
// so every behaviour is checked against the unmodified 3.2.1 and the latest 3.x.
import * as latest from "@vercel/sandbox";
import * as v321 from "sdk-3-2-1";
import { afterAll, beforeAll } from "vitest";
import { type LocalSandboxApi, startLocalSandboxApi } from "../../src/emulator/index.js";

export type Sdk = typeof latest;

export const SDKS: Array<[string, Sdk]> = [
  ["3.2.1", v321 as unknown as Sdk],
  ["latest", latest],
];

/** Starts an emulator for the file; the returned getter is valid inside tests. */
export function useEmulator(): () => LocalSandboxApi {
  let api: LocalSandboxApi | undefined;
  beforeAll(async () => {
    api = await startLocalSandboxApi();
  });
  afterAll(async () => {
    await api?.close();
  });
  return () => api!;
}

/** Credentials and fetch for every static SDK call. */
export function connect(api: LocalSandboxApi) {
  return { ...api.credentials, fetch: api.fetch };
}

/** Raw HTTP against the emulator, for status codes the SDK hides. */
export async function raw(api: LocalSandboxApi, method: string, path: string, body?: string) {
  const res = await fetch(`${api.url}${path}`, {
    method,
    headers: { authorization: `Bearer ${api.credentials.token}`, "content-type": "application/json" },
    body,
  });
  const text = await res.text();
  const json = (text ? JSON.parse(text) : {}) as { error?: { code?: string; message?: string } };
  return { status: res.status, json };
}
