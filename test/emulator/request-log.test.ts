// The request log (issue 42, item 7) records only requests that passed authorization, and holds a bounded
// amount: long paths are cut, and past its entry and byte budgets the oldest entries go. Before the fix every
// request was logged with its whole path before authorization and kept forever: 3,000 tokenless requests with
// 8 KB paths grew the heap by about 25 MiB.
import { Agent, request } from "node:http";
import { describe, expect, it } from "vitest";
import type { LocalSandboxApi } from "../../src/emulator/index.js";
import {
  REQUEST_LOG_BYTES,
  REQUEST_LOG_ENTRIES,
  REQUEST_LOG_PATH_CHARS,
  RequestLog,
} from "../../src/emulator/request-log.js";
import { useEmulator } from "./harness.js";
import { MiB, retainedBytes } from "./memory.js";

const emulator = useEmulator();
const REQUESTS = 3_000;
const LONG = 8 * 1024;

/** GETs `paths` over a few keep-alive connections; the statuses, in order. */
async function getAll(api: LocalSandboxApi, paths: string[], headers: Record<string, string>): Promise<number[]> {
  const agent = new Agent({ keepAlive: true, maxSockets: 8 });
  const statuses: number[] = new Array(paths.length);
  let next = 0;
  const worker = async () => {
    while (next < paths.length) {
      const i = next++;
      statuses[i] = await new Promise<number>((resolve, reject) => {
        const req = request(`${api.url}${paths[i]}`, { agent, headers }, (res) => {
          res.resume();
          res.once("end", () => resolve(res.statusCode ?? 0));
        });
        req.once("error", reject);
        req.end();
      });
    }
  };
  try {
    await Promise.all(Array.from({ length: 8 }, worker));
  } finally {
    agent.destroy();
  }
  return statuses;
}

const longPath = (i: number, query: string) =>
  `/v2/sandboxes/${String(i).padStart(6, "0")}${"x".repeat(LONG)}?${query}`;

describe("request log bounds", () => {
  it("tokenless requests are refused without entering the log or the heap", async () => {
    const api = emulator();
    const before = api.requests().length;
    const base = retainedBytes();
    const statuses = await getAll(
      api,
      Array.from({ length: REQUESTS }, (_, i) => longPath(i, `teamId=${api.credentials.teamId}`)),
      {},
    );
    expect(new Set(statuses)).toEqual(new Set([403]));
    const grown = retainedBytes() - base;
    expect(grown).toBeLessThan(8 * MiB);
    expect(api.requests().length).toBe(before);
  }, 120_000);

  it("authorized requests with 8 KB paths are logged with their paths cut, in bounded memory", async () => {
    const api = emulator();
    const before = api.requests().length;
    const base = retainedBytes();
    const statuses = await getAll(
      api,
      Array.from({ length: REQUESTS }, (_, i) => longPath(i, `teamId=${api.credentials.teamId}`)),
      { authorization: `Bearer ${api.credentials.token}` },
    );
    expect(new Set(statuses)).toEqual(new Set([404]));
    const grown = retainedBytes() - base;
    expect(grown).toBeLessThan(8 * MiB);
    const logged = api.requests().slice(before);
    expect(logged).toHaveLength(REQUESTS);
    for (const entry of logged) {
      expect(entry.path.length).toBeLessThanOrEqual(1024);
      expect(entry.path.startsWith("/v2/sandboxes/")).toBe(true);
    }
    // A cut path says so.
    expect(logged[0]!.path).toMatch(/…\[\d+ more characters\]$/);
  }, 120_000);
});

describe("the request log's ring", () => {
  it("keeps the newest REQUEST_LOG_ENTRIES entries, oldest first", () => {
    const log = new RequestLog();
    for (let i = 0; i < REQUEST_LOG_ENTRIES + 2_500; i++) log.add("GET", `/r/${i}`);
    const kept = log.list();
    expect(kept).toHaveLength(REQUEST_LOG_ENTRIES);
    expect(kept[0]!.path).toBe("/r/2500");
    expect(kept.at(-1)!.path).toBe(`/r/${REQUEST_LOG_ENTRIES + 2_499}`);
  });

  it("keeps at most REQUEST_LOG_BYTES of cut paths however long the paths sent", () => {
    const log = new RequestLog();
    const path = `/${"p".repeat(64 * 1024)}`;
    for (let i = 0; i < REQUEST_LOG_ENTRIES; i++) log.add("POST", path);
    const kept = log.list();
    expect(kept.every((e) => e.path.length <= REQUEST_LOG_PATH_CHARS)).toBe(true);
    expect(log.cost).toBeLessThanOrEqual(REQUEST_LOG_BYTES);
    expect(kept.length).toBeLessThan(REQUEST_LOG_ENTRIES);
    expect(kept.reduce((sum, e) => sum + 2 * e.path.length, 0)).toBeLessThanOrEqual(REQUEST_LOG_BYTES);
  });

  it("a path at the limit is kept whole, one past it is cut with the count of what was cut", () => {
    const log = new RequestLog();
    const whole = `/${"a".repeat(REQUEST_LOG_PATH_CHARS - 1)}`;
    const long = `${whole}b`;
    expect(log.add("GET", whole).path).toBe(whole);
    const cut = log.add("GET", long).path;
    expect(cut.length).toBeLessThanOrEqual(REQUEST_LOG_PATH_CHARS);
    expect(long.startsWith(cut.slice(0, cut.indexOf("…")))).toBe(true);
    expect(cut).toBe(`${long.slice(0, REQUEST_LOG_PATH_CHARS - 32)}…[33 more characters]`);
  });
});
