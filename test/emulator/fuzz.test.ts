// Fuzz (issue 11, "Bad input"): 500 random requests against the emulator — any method, paths built from the
// real route shapes with real and garbage names, odd percent-encodings, random query strings, headers and
// bodies, mostly with the valid bearer token and sometimes without or with a wrong one. Every request gets a
// well-formed answer: a JSON body (or NDJSON, or nothing for HEAD/204), a status below 500 except where a
// fault was injected, and no hang (each request is bounded). Afterwards the server still serves the SDK.
import { connect } from "node:net";
import { Sandbox } from "@vercel/sandbox";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type LocalSandboxApi, startLocalSandboxApi } from "../../src/emulator/index.js";

const REQUESTS = 500;
/** The one path that answers an injected 503: the only 5xx a request may get. */
const FAULTED = "/v2/sandboxes/fuzz-injected-fault";

let api: LocalSandboxApi;
let sandboxName = "";
let sessionId = "";

beforeAll(async () => {
  api = await startLocalSandboxApi();
  const sandbox = await Sandbox.create({ ...api.credentials, fetch: api.fetch, name: "fuzz-target" });
  sandboxName = sandbox.name;
  sessionId = sandbox.currentSession().sessionId;
  api.faults.inject({ path: FAULTED, status: 503, times: REQUESTS });
}, 120_000);
afterAll(() => api?.close());

const garbage = fc.oneof(
  fc.string({ maxLength: 30 }),
  fc.constantFrom("%", "%E0%A4%A", "%00", "..", ".", "%2F", "a%2Fb", "x".repeat(2_000), "🙂", "null", "-1"),
);
const name = () => fc.oneof(fc.constant(sandboxName), fc.constant(sessionId), garbage);
const path = fc.oneof(
  fc.constantFrom("/", "/v1/sandboxes", "/v2/sandboxes", "/v3/sandboxes", "/v2/sandboxes/sessions", FAULTED),
  fc.constantFrom("/v2/sandboxes/snapshots", "/v2/sandboxes/snapshots/tree"),
  fc.tuple(name()).map(([n]) => `/v2/sandboxes/${encodeURI(n)}`),
  fc
    .tuple(name(), fc.constantFrom("", "/stop", "/extend-timeout", "/network-policy", "/snapshot", "/interactive"))
    .map(([n, tail]) => `/v2/sandboxes/sessions/${encodeURI(n)}${tail}`),
  fc
    .tuple(name(), fc.constantFrom("/cmd", "/fs/mkdir", "/fs/write", "/fs/read"))
    .map(([n, tail]) => `/v2/sandboxes/sessions/${encodeURI(n)}${tail}`),
  fc
    .tuple(name(), garbage, fc.constantFrom("", "/logs", "/kill"))
    .map(([n, cmd, tail]) => `/v2/sandboxes/sessions/${encodeURI(n)}/cmd/${encodeURI(cmd)}${tail}`),
  fc.tuple(name(), fc.constantFrom("/fork", "")).map(([n, tail]) => `/v2/sandboxes/${encodeURI(n)}${tail}`),
  fc.tuple(garbage).map(([id]) => `/v2/sandboxes/snapshots/${encodeURI(id)}`),
  fc.webPath(),
  fc.webPath().map((p) => `//${p}`),
);
const query = fc.option(
  fc.dictionary(fc.constantFrom("teamId", "projectId", "limit", "since", "until", "name", "wait", "x"), garbage, {
    maxKeys: 3,
  }),
  { nil: undefined },
);
const body = fc.option(
  fc.oneof(
    fc.jsonValue({ maxDepth: 4 }).map((value) => JSON.stringify(value)),
    fc
      .record(
        {
          name: garbage,
          command: garbage,
          args: fc.array(garbage, { maxLength: 3 }),
          runtime: garbage,
          timeout: fc.oneof(fc.integer(), garbage),
          resources: fc.jsonValue({ maxDepth: 2 }),
          networkPolicy: fc.jsonValue({ maxDepth: 2 }),
          path: garbage,
          files: fc.jsonValue({ maxDepth: 2 }),
        },
        { requiredKeys: [] },
      )
      .map((value) => JSON.stringify(value)),
    fc.string({ unit: "binary", maxLength: 300 }),
    fc.constantFrom("", "{", "[", "null", "\u0000"),
  ),
  { nil: undefined },
);
const request = fc.record({
  method: fc.constantFrom("GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS"),
  path,
  query,
  body,
  contentType: fc.constantFrom(undefined, "application/json", "text/plain", "application/x-ndjson", "garbage/;;"),
  // Mostly the valid token (so requests reach the handlers), sometimes none or a wrong one.
  auth: fc.constantFrom("valid", "valid", "valid", "valid", "valid", "valid", "valid", "none", "wrong", "garbled"),
});

function authorization(kind: string): string | undefined {
  if (kind === "valid") return `Bearer ${api.credentials.token}`;
  if (kind === "wrong") return "Bearer not-the-token";
  if (kind === "garbled") return "Basic ???";
  return undefined;
}

/** Parses a response body: JSON, NDJSON (every line JSON), or empty for HEAD/204. Throws when malformed. */
function parseBody(method: string, status: number, contentType: string, text: string): void {
  if (method === "HEAD" || status === 204 || status === 304) return;
  if (contentType.includes("ndjson")) {
    for (const line of text.split("\n").filter(Boolean)) JSON.parse(line);
    return;
  }
  expect(contentType, `content-type of a ${status}`).toContain("application/json");
  JSON.parse(text);
}

describe("emulator request fuzz", () => {
  it(`${REQUESTS} random requests get well-formed answers below 500, and the server keeps serving`, {
    timeout: 600_000,
  }, async () => {
    const statuses = new Map<number, number>();
    await fc.assert(
      fc.asyncProperty(request, async (r) => {
        const url = new URL(`${api.url}${r.path}`);
        // The scope the SDK sends, so that requests get past it to the handlers; the random query may override it.
        url.searchParams.set("teamId", api.credentials.teamId);
        url.searchParams.set("projectId", api.credentials.projectId);
        for (const [key, value] of Object.entries(r.query ?? {})) url.searchParams.set(key, value);
        const headers: Record<string, string> = {};
        const auth = authorization(r.auth);
        if (auth) headers.authorization = auth;
        if (r.contentType) headers["content-type"] = r.contentType;
        const withBody = r.body !== undefined && !["GET", "HEAD"].includes(r.method);
        const response = await fetch(url, {
          method: r.method,
          headers,
          body: withBody ? r.body : undefined,
          signal: AbortSignal.timeout(30_000),
        });
        const text = await response.text();
        const what = `${r.method} ${url.pathname}${url.search} -> ${response.status}: ${text.slice(0, 300)}`;
        statuses.set(response.status, (statuses.get(response.status) ?? 0) + 1);
        if (url.pathname !== FAULTED) expect(response.status, what).toBeLessThan(500);
        expect(response.status, what).toBeGreaterThanOrEqual(200);
        parseBody(r.method, response.status, response.headers.get("content-type") ?? "", text);
        // Without the valid token nothing but the auth check answers (or the injected fault, which runs after it).
        if (r.auth !== "valid" && response.status < 400) expect.fail(`unauthenticated request succeeded: ${what}`);
      }),
      { numRuns: REQUESTS, endOnFailure: true },
    );
    // The requests reached the handlers, not only the router: some succeeded and some were refused.
    const ok = [...statuses].filter(([status]) => status < 300).reduce((sum, [, n]) => sum + n, 0);
    expect(ok).toBeGreaterThan(0);
    expect([...statuses.keys()].some((status) => status >= 400 && status < 500)).toBe(true);

    const connection = { ...api.credentials, fetch: api.fetch };
    const listed = await (await Sandbox.list(connection)).toArray();
    expect(listed.map((sandbox) => sandbox.name)).toContain(sandboxName);
    const sandbox = await Sandbox.get({ ...connection, name: sandboxName });
    const echo = await sandbox.runCommand("echo", ["still serving"]);
    expect(await echo.stdout()).toBe("still serving\n");
  });

  it('a request path starting with "//" is answered with JSON and the server keeps serving', async () => {
    for (const path of ["//", "//evil.example/v2/sandboxes", "/.//v2/sandboxes"]) {
      const response = await rawRequest(api.url, "GET", path, api.credentials.token);
      expect(response.status, path).toBeLessThan(500);
      expect(() => JSON.parse(response.body), path).not.toThrow();
    }
    expect(
      (
        await rawRequest(
          api.url,
          "GET",
          "/v2/sandboxes?teamId=team_emulator&projectId=prj_emulator",
          api.credentials.token,
        )
      ).status,
    ).toBe(200);
  });

  it("an unknown HTTP method is answered 400 JSON, and the server keeps serving", async () => {
    const response = await rawRequest(api.url, "FUZZ", "/v2/sandboxes", api.credentials.token);
    expect(response.status).toBe(400);
    expect(JSON.parse(response.body)).toMatchObject({ error: { code: "bad_request" } });
    expect(
      (
        await rawRequest(
          api.url,
          "GET",
          "/v2/sandboxes?teamId=team_emulator&projectId=prj_emulator",
          api.credentials.token,
        )
      ).status,
    ).toBe(200);
  });
});

/** One raw HTTP/1.1 exchange, so the request line is exactly what the test writes (fetch normalises paths). */
async function rawRequest(base: string, method: string, path: string, token: string) {
  const { port } = new URL(base);
  const socket = connect(Number(port), "127.0.0.1");
  socket.write(
    `${method} ${path} HTTP/1.1\r\nhost: 127.0.0.1\r\nauthorization: Bearer ${token}\r\nconnection: close\r\n\r\n`,
  );
  const chunks: Buffer[] = [];
  for await (const chunk of socket) chunks.push(chunk as Buffer);
  const text = Buffer.concat(chunks).toString("utf8");
  const [head = "", ...rest] = text.split("\r\n\r\n");
  return { status: Number(head.split(" ")[1]), body: rest.join("\r\n\r\n") };
}
