// Malformed profile settings (issue 11, "Bad input"): through every provider entry point, each bad value is
// refused with a WorkerProviderError naming its key before any Vercel request, and the message never
// carries the value, which here is always a recognisable secret (an operator may paste a token anywhere).
import { randomBytes } from "node:crypto";
import { type WorkerProfile, WorkerProviderError } from "openclaw/plugin-sdk/plugin-entry";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { enrollingOptions, operationId } from "../../src/conformance/fixtures.js";
import { type LocalSandboxApi, startLocalSandboxApi } from "../../src/emulator/index.js";
import { createVercelSandboxProvider, type VercelSandboxProvider } from "../../src/provider/index.js";

const SECRET = `vercelsecret${randomBytes(10).toString("hex")}`;
const LEASE = `vsb_${"0".repeat(24)}`;

let api: LocalSandboxApi;
let provider: VercelSandboxProvider;
let base: WorkerProfile;

beforeAll(async () => {
  api = await startLocalSandboxApi();
  base = {
    apiUrl: api.url,
    tokenEnv: "BAD_SETTINGS_TOKEN",
    teamId: api.credentials.teamId,
    projectId: api.credentials.projectId,
  };
  provider = createVercelSandboxProvider({
    env: { BAD_SETTINGS_TOKEN: api.credentials.token },
    logger: { warn: () => undefined },
    scope: "bad-settings",
    enroll: async ({ enrollment }) => enrollment.waitForDeviceId(),
  });
});
afterAll(async () => {
  await provider.dispose();
  await api.close();
});

/** Every entry point that takes a profile. */
const ENTRY_POINTS: Array<[string, (profile: WorkerProfile) => Promise<unknown>]> = [
  ["provision", (profile) => provider.provision(profile, operationId(), enrollingOptions())],
  ["inspect", (profile) => provider.inspect({ leaseId: LEASE, profile })],
  ["destroy", (profile) => provider.destroy({ leaseId: LEASE, profile })],
  ["resolveAllocation", (profile) => provider.resolveAllocation(profile, operationId())],
  ["listMachineOptions", async (profile) => provider.listMachineOptions?.(profile)],
  [
    "maintain",
    async (profile) =>
      provider.maintain?.({
        profiles: [profile],
        signal: new AbortController().signal,
        assertCurrent: () => undefined,
      }),
  ],
];

/** [what is wrong, the settings (over a valid emulator profile), the key the message must name]. */
const BAD: Array<[string, Record<string, unknown>, string]> = [
  ["an inline token", { token: SECRET }, "token"],
  ["a token under a misspelled key", { vercelToken: SECRET }, "vercelToken"],
  ["a token as the env var name", { tokenEnv: `${SECRET}-x` }, "tokenEnv"],
  ["an exec SecretRef", { tokenEnv: undefined, token: { source: "exec", provider: "p", id: SECRET } }, "token.source"],
  [
    "an env SecretRef whose id is not a variable name",
    { tokenEnv: undefined, token: { source: "env", provider: "p", id: `${SECRET} x` } },
    "token.id",
  ],
  [
    "a file SecretRef with a relative path",
    { tokenEnv: undefined, token: { source: "file", provider: "p", id: `${SECRET}.txt` } },
    "token.id",
  ],
  [
    "a SecretRef with an unknown key",
    { tokenEnv: undefined, token: { source: "env", provider: "p", id: "T", value: SECRET } },
    "token.value",
  ],
  ["a team id with spaces", { teamId: `  ${SECRET}` }, "teamId"],
  ["a project id with a slash", { projectId: `prj/${SECRET}` }, "projectId"],
  ["an empty team id", { teamId: "" }, "teamId"],
  ["credentials in the API URL", { apiUrl: `https://user:${SECRET}@example.com` }, "apiUrl"],
  ["a query in the API URL", { apiUrl: `https://example.com/api?token=${SECRET}` }, "apiUrl"],
  ["plain http to a remote API", { apiUrl: `http://${SECRET}.example.com` }, "apiUrl"],
  ["an API URL that is not a URL", { apiUrl: `https://[${SECRET}` }, "apiUrl"],
  ["a runtime Vercel does not offer", { runtime: SECRET }, "runtime"],
  ["a vCPU count that is not offered", { vcpus: 3 }, "vcpus"],
  ["a vCPU count given as a string", { vcpus: "2" }, "vcpus"],
  ["a timeout below a minute", { timeout: "30s" }, "timeout"],
  ["a timeout beyond 24 hours", { timeout: 86_400_001 }, "timeout"],
  ["a timeout in an unknown unit", { timeout: `5${SECRET}` }, "timeout"],
  ["a negative timeout", { timeout: -60_000 }, "timeout"],
  ["a timeout too large to be exact", { timeout: "99999999999999999999d" }, "timeout"],
  ["a region of the wrong shape", { region: SECRET }, "region"],
  ["a domain with a space", { networkPolicy: { allow: [`${SECRET} com`] } }, "networkPolicy.allow.0"],
  ["a domain of dots only", { networkPolicy: { allow: ["example.com", "..."] } }, "networkPolicy.allow.1"],
  ["a domain with an empty label", { networkPolicy: { allow: [`${SECRET}..com`] } }, "networkPolicy.allow.0"],
  ["a domain starting with a hyphen", { networkPolicy: { allow: [`-${SECRET}.com`] } }, "networkPolicy.allow.0"],
  [
    "an IPv4 block with an impossible address",
    { networkPolicy: { allowCidrs: ["999.1.1.1/8"] } },
    "networkPolicy.allowCidrs.0",
  ],
  [
    "an IPv4 block with a prefix over 32",
    { networkPolicy: { allowCidrs: ["10.0.0.0/8", "10.0.0.0/33"] } },
    "networkPolicy.allowCidrs.1",
  ],
  ["an IPv6 block that is not an address", { networkPolicy: { allowCidrs: [":::/64"] } }, "networkPolicy.allowCidrs.0"],
  ["a block without a prefix", { networkPolicy: { allowCidrs: [SECRET] } }, "networkPolicy.allowCidrs.0"],
  ["an unknown egress keyword", { networkPolicy: SECRET }, "networkPolicy"],
  ["an unknown egress key", { networkPolicy: { deny: [SECRET] } }, "networkPolicy.deny"],
  ["a port out of range", { ports: [70_000] }, "ports.0"],
  ["a repeated port", { ports: [3000, 3000] }, "ports"],
  ["three tags", { tags: { a: "1", b: "2", c: SECRET } }, "tags"],
  ["a reserved tag key", { tags: { "openclaw-op": SECRET } }, "tags.openclaw-op"],
  ["an over-long tag value", { tags: { team: SECRET.repeat(20) } }, "tags.team"],
  ["snapshots kept beyond ten", { snapshots: { keepLast: 11 } }, "snapshots.keepLast"],
  ["a snapshot expiration in an unknown unit", { snapshots: { expiration: `7${SECRET}` } }, "snapshots.expiration"],
  ["an unknown snapshots key", { snapshots: { keep: SECRET } }, "snapshots.keep"],
  ["a scope with capitals", { scope: SECRET.toUpperCase() }, "scope"],
  ["an unknown backend", { backend: SECRET }, "backend"],
  ["a prototype key", JSON.parse(`{"__proto__": {"token": "${SECRET}"}}`) as Record<string, unknown>, "__proto__"],
];

describe("malformed profile settings", () => {
  it.each(BAD)("%s is refused before any request, naming its key and not its value", async (_what, bad, key) => {
    const profile = { ...base, ...bad } as WorkerProfile;
    for (const [entry, call] of ENTRY_POINTS) {
      const before = api.requests().length;
      const error = await call(profile).then(
        () => new Error(`${entry} accepted the settings`),
        (e: unknown) => e,
      );
      expect(error, entry).toBeInstanceOf(WorkerProviderError);
      expect((error as Error).message, entry).toContain(`\`${key}\``);
      expect((error as Error).message, entry).not.toContain(SECRET);
      expect(api.requests().slice(before), entry).toEqual([]);
    }
  });

  it("a valid profile over the same base reaches the API, so the refusals above are the settings' doing", async () => {
    const before = api.requests().length;
    expect(await provider.inspect({ leaseId: LEASE, profile: base })).toEqual({ status: "unknown" });
    expect(api.requests().length).toBeGreaterThan(before);
  });
});
