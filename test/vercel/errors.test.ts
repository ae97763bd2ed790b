// Which failures are transient (retried, and a reason to look for a create that may have landed) and which
// are not. Network failures here are real ones: a server that drops connections and a port nobody listens on.
import { createServer, type Server } from "node:net";
import { APIError } from "@vercel/sandbox";
import { request, fetch as undiciFetch } from "undici";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { classify } from "../../src/vercel/errors.js";

let dropping: Server;
let droppingUrl: string;
let refusedUrl: string;

function listen(server: Server): Promise<number> {
  return new Promise((resolve) =>
    server.listen(0, "127.0.0.1", () => resolve((server.address() as { port: number }).port)),
  );
}

beforeAll(async () => {
  dropping = createServer((socket) => socket.destroy());
  droppingUrl = `http://127.0.0.1:${await listen(dropping)}/v2/sandboxes`;
  const closed = createServer();
  const port = await listen(closed);
  await new Promise((resolve) => closed.close(resolve));
  refusedUrl = `http://127.0.0.1:${port}/v2/sandboxes`;
});
afterAll(() => new Promise((resolve) => dropping.close(resolve)));

const failureOf = (work: Promise<unknown>) =>
  work.then(
    () => {
      throw new Error("expected the request to fail");
    },
    (error: unknown) => error,
  );

describe("failure classification", () => {
  it("a connection the server drops is transient (Node's fetch and undici's fetch alike)", async () => {
    expect(classify(await failureOf(fetch(droppingUrl)), "get sandbox").kind).toBe("transient");
    expect(classify(await failureOf(undiciFetch(droppingUrl)), "get sandbox").kind).toBe("transient");
  });

  it("undici's own socket error, unwrapped by fetch, is transient", async () => {
    const error = await failureOf(request(droppingUrl));
    expect((error as { code?: string }).code).toBe("UND_ERR_SOCKET");
    expect(classify(error, "get sandbox").kind).toBe("transient");
  });

  it("a refused connection is transient", async () => {
    expect(classify(await failureOf(fetch(refusedUrl)), "get sandbox").kind).toBe("transient");
  });

  it("a request timeout is transient", async () => {
    const error = await failureOf(fetch(droppingUrl, { signal: AbortSignal.timeout(0) }));
    expect(classify(error, "get sandbox").kind).toBe("transient");
  });

  it.each([
    new TypeError("sandbox.extendTimeout is not a function"),
    new RangeError("Invalid time value"),
    new Error("something our code did"),
    "a string thrown",
  ])("an error without an HTTP status that is not network-level is unexpected, never transient: %s", (error) => {
    expect(classify(error, "create sandbox").kind).toBe("unexpected");
  });

  it.each([
    [408, "transient"],
    [429, "transient"],
    [500, "transient"],
    [502, "transient"],
    [503, "transient"],
    [400, "rejected"],
    [401, "auth"],
    [403, "auth"],
    [404, "not_found"],
    [409, "conflict"],
    [410, "gone"],
    [422, "rejected"],
  ] as const)("the SDK's APIError with status %i is %s", (status, kind) => {
    expect(classify(new APIError(new Response(null, { status })), "get sandbox").kind).toBe(kind);
  });

  it("an abort is an abort", async () => {
    const controller = new AbortController();
    controller.abort();
    expect(classify(await failureOf(fetch(refusedUrl, { signal: controller.signal })), "get sandbox").kind).toBe(
      "aborted",
    );
  });
});
