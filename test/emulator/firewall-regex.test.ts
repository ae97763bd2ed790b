// Firewall rule regexes have RE2's semantics and run in linear time (issue 42, item 9), as Vercel documents: the
// proxy matches requests on the one event loop that serves every sandbox, so a backtracking pattern would freeze
// them all. A pattern RE2 refuses (lookaround, backreferences) is a 400 naming it when a policy is created or
// updated. Matching runs in a worker here so that, before the fix, the spec fails at its deadline instead of
// freezing the test process with the emulator in it.
import { Worker } from "node:worker_threads";
import * as sdk from "@vercel/sandbox";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { claimingRule, type RequestRule } from "../../src/emulator/egress-rules.js";
import { connect, raw, useEmulator } from "./harness.js";

const emulator = useEmulator();
const RULES = new URL("../../src/emulator/egress-rules.ts", import.meta.url).href;
/** Far beyond what the linear engine needs (milliseconds); a backtracking engine needs ~2^64 steps. */
const DEADLINE_MS = 30_000;

// Runs in the worker: the TypeScript sources load with Node's type stripping, `./x.js` imports resolved to `./x.ts`.
const WORKER = `
const { registerHooks } = require("node:module");
const { existsSync } = require("node:fs");
const { fileURLToPath } = require("node:url");
const { workerData, parentPort } = require("node:worker_threads");
registerHooks({
  resolve(specifier, context, next) {
    if (specifier.startsWith(".") && specifier.endsWith(".js") && context.parentURL?.endsWith(".ts")) {
      const ts = new URL(specifier.replace(/\\.js$/, ".ts"), context.parentURL);
      if (existsSync(fileURLToPath(ts))) return next(ts.href, context);
    }
    return next(specifier, context);
  },
});
import(workerData.rules).then((m) => {
  const rule = { match: { path: { regex: workerData.pattern } }, response: { statusCode: 200 } };
  const request = { method: "GET", path: workerData.path, query: new URLSearchParams(), headers: {} };
  parentPort.postMessage({ claimed: m.claimingRule([rule], request) !== undefined });
}, (error) => parentPort.postMessage({ error: String(error && error.stack) }));
`;

/** Whether the rule claims the request, or "deadline" when matching did not end within DEADLINE_MS. */
function matchInWorker(pattern: string, path: string): Promise<{ claimed?: boolean; error?: string } | "deadline"> {
  const worker = new Worker(WORKER, {
    eval: true,
    execArgv: ["--experimental-transform-types", "--no-warnings"],
    workerData: { rules: RULES, pattern, path },
  });
  return new Promise<{ claimed?: boolean; error?: string } | "deadline">((resolve, reject) => {
    const timer = setTimeout(() => resolve("deadline"), DEADLINE_MS);
    worker.once("message", (m) => {
      clearTimeout(timer);
      resolve(m);
    });
    worker.once("error", (e) => {
      clearTimeout(timer);
      reject(e);
    });
  }).finally(() => worker.terminate());
}

const request = (path: string) => ({ method: "GET", path, query: new URLSearchParams(), headers: {} });

describe("firewall rule regexes", () => {
  it(
    "a catastrophically backtracking pattern is matched in linear time",
    async () => {
      const evil = `/${"a".repeat(64)}!`;
      expect(await matchInWorker("^/(a+)+$", evil)).toEqual({ claimed: false });
      expect(await matchInWorker("^/(a|aa)+!$", evil)).toEqual({ claimed: true });
    },
    2 * DEADLINE_MS + 10_000,
  );

  it("RE2 syntax JavaScript lacks works: inline flags", () => {
    const rules: RequestRule[] = [{ match: { path: { regex: "(?i)^/API/" } }, response: { statusCode: 200 } }];
    expect(claimingRule(rules, request("/api/v1"))).toBe(rules[0]);
    expect(claimingRule(rules, request("/other/api/"))).toBeUndefined();
  });

  it("matches anywhere in the value unless anchored, as before", () => {
    const rules: RequestRule[] = [{ match: { path: { regex: "v[0-9]+" } }, response: { statusCode: 200 } }];
    expect(claimingRule(rules, request("/api/v2/x"))).toBe(rules[0]);
    expect(claimingRule(rules, request("/api/vx"))).toBeUndefined();
  });
});

describe("patterns RE2 refuses", () => {
  let sandbox: Awaited<ReturnType<typeof sdk.Sandbox.create>>;
  const GOOD = { allow: { "x.test": [{ match: { path: { regex: "^/ok" } }, response: { statusCode: 204 } }] } };

  beforeAll(async () => {
    sandbox = await sdk.Sandbox.create({ ...connect(emulator()), networkPolicy: GOOD as never });
  }, 120_000);
  afterAll(async () => {
    await sandbox?.delete();
  });

  const refused: Array<[string, Record<string, unknown>]> = [
    ["(?=x)", { path: { regex: "(?=x)" } }],
    ["(a)\\1", { headers: [{ key: { exact: "x-a" }, value: { regex: "(a)\\1" } }] }],
    ["(?<!a)b", { queryString: [{ key: { regex: "(?<!a)b" } }] }],
  ];

  it.each(refused)("%s is a 400 naming it at create, and nothing is created", async (pattern, match) => {
    const api = emulator();
    const before = (await raw(api, "GET", `/v2/sandboxes?project=${api.credentials.projectId}`)).json;
    const created = await raw(
      api,
      "POST",
      "/v3/sandboxes",
      JSON.stringify({
        projectId: api.credentials.projectId,
        networkPolicy: { allow: { "x.test": [{ match, response: { statusCode: 200 } }] } },
      }),
    );
    expect(created.status).toBe(400);
    expect(created.json.error?.code).toBe("bad_request");
    expect(created.json.error?.message).toContain(`${JSON.stringify(pattern)} is not a valid RE2 regular expression`);
    const after = (await raw(api, "GET", `/v2/sandboxes?project=${api.credentials.projectId}`)).json;
    expect(after).toEqual(before);
  });

  it.each(refused)("%s is a 400 naming it at update, and the policy stays as it was", async (pattern, match) => {
    const api = emulator();
    const session = `/v2/sandboxes/sessions/${sandbox.currentSession().sessionId}`;
    const updated = await raw(
      api,
      "POST",
      `${session}/network-policy`,
      JSON.stringify({ allow: { "y.test": [{ match, response: { statusCode: 200 } }] } }),
    );
    expect(updated.status).toBe(400);
    expect(updated.json.error?.message).toContain(`${JSON.stringify(pattern)} is not a valid RE2 regular expression`);
    const now = (await raw(api, "GET", session)).json as { session: { networkPolicy: { allowedDomains?: string[] } } };
    expect(now.session.networkPolicy.allowedDomains).toEqual(["x.test"]);
  });
});
