// The fetch wrappers the client seam gives the SDK accept every input `fetch` does: a string, a URL or a
// Request. Against the emulator, so a misrouted request shows as a failed one.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type LocalSandboxApi, startLocalSandboxApi } from "../../src/emulator/index.js";
import { createVercelSandboxProvider } from "../../src/provider/index.js";
import { refusingResume, rewritingFetch } from "../../src/vercel/fetch.js";

let api: LocalSandboxApi;
beforeAll(async () => {
  api = await startLocalSandboxApi();
});
afterAll(() => api.close());

const listUrl = () =>
  `https://vercel.com/api/v2/sandboxes?projectId=${api.credentials.projectId}&teamId=${api.credentials.teamId}`;
const auth = () => ({ authorization: `Bearer ${api.credentials.token}` });

describe("rewritingFetch", () => {
  it.each([
    ["a string", () => listUrl()],
    ["a URL", () => new URL(listUrl())],
    ["a Request, keeping its headers", () => new Request(listUrl(), { headers: auth() })],
  ])("sends %s meant for vercel.com/api to the configured API", async (_what, input) => {
    const fetch = rewritingFetch(api.url, globalThis.fetch);
    const value = input();
    const response = await fetch(value, value instanceof Request ? undefined : { headers: auth() });
    expect(response.status).toBe(200);
    expect(((await response.json()) as { sandboxes?: unknown[] }).sandboxes).toBeInstanceOf(Array);
  });
});

describe("refusingResume", () => {
  it.each([
    ["a string", (url: string) => url],
    ["a URL", (url: string) => new URL(url)],
    ["a Request", (url: string) => new Request(url)],
  ])("answers a resume request given as %s without sending it", async (_what, input) => {
    const before = api.requests().length;
    const fetch = refusingResume(api.fetch);
    const response = await fetch(input("https://vercel.com/api/v2/sandboxes/openclaw-x?resume=true"));
    expect(response.status).toBe(409);
    expect(api.requests().length).toBe(before);
  });
});

describe("explicit credentials", () => {
  it("a token passed in options.credentials never appears in an error", async () => {
    const token = `explicit_${api.credentials.token.slice(4)}_never_seen`;
    const provider = createVercelSandboxProvider({
      logger: { warn: () => undefined },
      credentials: { token, teamId: api.credentials.teamId, projectId: api.credentials.projectId },
      fetch: async (_input, init) => {
        const header = new Headers(init?.headers).get("authorization") ?? "";
        throw new Error(`proxy refused credential ${header.replace(/^Bearer /, "")}`);
      },
    });
    const error = await provider.inspect({ leaseId: "vsb_0123456789abcdef01234567", profile: {} }).catch((e) => e);
    expect((error as Error).message).toContain("proxy refused credential [redacted]");
    expect((error as Error).message).not.toContain(token);
  });
});
