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

export interface RawOptions {
  /** The Authorization header to send; default the emulator's bearer token, `null` sends none. */
  authorization?: string | null;
  /** The `teamId` query parameter; default the emulator's team, `null` sends none. */
  teamId?: string | null;
}

/** Raw HTTP against the emulator, for status codes the SDK hides; authenticated as the SDK is unless told. */
export async function raw(api: LocalSandboxApi, method: string, path: string, body?: string, options: RawOptions = {}) {
  const url = new URL(path, api.url);
  const teamId = options.teamId === undefined ? api.credentials.teamId : options.teamId;
  if (teamId !== null) url.searchParams.set("teamId", teamId);
  const authorization = options.authorization === undefined ? `Bearer ${api.credentials.token}` : options.authorization;
  const headers: Record<string, string> = { "content-type": "application/json" };
  if (authorization !== null) headers.authorization = authorization;
  const res = await fetch(url, { method, headers, body });
  const text = await res.text();
  const json = (text ? JSON.parse(text) : {}) as {
    error?: { code?: string; message?: string; [key: string]: unknown };
    [key: string]: unknown;
  };
  return { status: res.status, json, text };
}

/** Runs a bash script in a sandbox (as sandbox root with `sudo`): its exit code, stdout and stderr. */
export async function sh(sandbox: Awaited<ReturnType<Sdk["Sandbox"]["create"]>>, script: string, sudo = false) {
  const done = await sandbox.runCommand({ cmd: "bash", args: ["-c", script], sudo });
  return { code: done.exitCode, out: await done.stdout(), err: await done.stderr() };
}
