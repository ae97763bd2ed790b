// The main job's model key, on the job's own services and the real emulator: the scripted model (on an address of
// its own) refuses any request without its random key; VM1, created with the job's network policy, holds no key
// and its request is answered, because the firewall's rule for the model's host adds it; a sandbox whose policy
// allows the same addresses without the rule is refused. The rule is the model's alone: the API front, on the
// host address beside it, still presents its own certificate (its TLS is not terminated by the firewall), and the
// gateway config the job writes holds no model key at all.
import { randomBytes } from "node:crypto";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { Sandbox } from "@vercel/sandbox";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { redact } from "../../src/infra/index.js";
import { filesHolding, vm1OnDisk } from "../../src/main-job/evidence.js";
import { emulatorDataDir, type Services, startServices } from "../../src/main-job/services.js";
import { Teardown } from "../../src/main-job/teardown.js";
import { DEMO_TIMERS, jobConfigPatch, PACKAGE_REGISTRY, vm1NetworkPolicy } from "../../src/main-job/topology.js";

let dir = "";
let services: Services;
const teardown = new Teardown();

beforeAll(async () => {
  dir = await mkdtemp(path.join(tmpdir(), "vsb-model-key-"));
  services = await startServices(teardown, dir);
}, 120_000);

afterAll(async () => {
  const failed = await teardown.run(() => undefined);
  await rm(dir, { recursive: true, force: true });
  expect(failed).toEqual([]);
}, 120_000);

const ask = () =>
  `curl -sS --max-time 20 -w ' %{http_code}' -H 'content-type: application/json' ` +
  `-d '{"messages":[{"role":"user","content":"hi"}]}' ${services.model.baseUrl}/chat/completions`;

async function run(box: Sandbox, script: string, sudo = false) {
  const done = await box.runCommand({ cmd: "sh", args: ["-c", script], sudo });
  return { exitCode: done.exitCode, stdout: (await done.stdout()).trim(), stderr: await done.stderr() };
}

describe("the main job's model key is added by VM1's firewall, never held by VM1", () => {
  it("the model has an address of its own, and the job's policy has one rule: the model's", () => {
    expect(new URL(services.model.baseUrl).hostname).not.toBe(services.address);
    const policy = vm1NetworkPolicy({
      hostAddress: services.address,
      modelBaseUrl: services.model.baseUrl,
      modelKey: services.modelKey,
    }) as { allow: Record<string, unknown[]> };
    expect(Object.keys(policy.allow).sort()).toEqual(
      [PACKAGE_REGISTRY, services.address, services.modelAddress].sort(),
    );
    expect(policy.allow[PACKAGE_REGISTRY]).toEqual([]);
    expect(policy.allow[services.address]).toEqual([]);
    expect(policy.allow[services.modelAddress]).toEqual([
      {
        match: { path: { startsWith: "/v1/" } },
        transform: [{ headers: { authorization: `Bearer ${services.modelKey}` } }],
      },
    ]);
  });

  it("the gateway config VM1 gets names the model but holds no key, and the key is redacted from messages", () => {
    const config = jobConfigPatch({
      port: 18789,
      publicOrigin: "https://vm1-18789.vercel.run",
      modelBaseUrl: services.model.baseUrl,
      apiUrl: services.front.url,
      teamId: "team_x",
      projectId: "prj_x",
      notifyUrl: `http://${services.address}:1/notify`,
      timers: DEMO_TIMERS,
      logFile: "/tmp/openclaw.log",
    }) as unknown as { models: { providers: { scripted: Record<string, unknown> } } };
    expect(config.models.providers.scripted.baseUrl).toBe(services.model.baseUrl);
    expect(JSON.stringify(config)).not.toMatch(/apiKey|sk-model-/);
    expect(redact(`the key is ${services.modelKey}.`)).toBe("the key is [redacted].");
  });

  it("VM1's request is answered through the rule; without it, the model refuses the same request", {
    timeout: 180_000,
  }, async () => {
    const { connection } = services;
    const policy = vm1NetworkPolicy({
      hostAddress: services.address,
      modelBaseUrl: services.model.baseUrl,
      modelKey: services.modelKey,
    });
    const vm1 = await Sandbox.create({ ...connection, name: "vm1-model-key", networkPolicy: policy });
    const refusedBefore = services.model.refused();
    const answered = await run(vm1, ask());
    expect(answered.stdout).toMatch(/Hello from the scripted model\..* 200$/);
    expect(services.model.refused()).toBe(refusedBefore);

    // The same addresses allowed without the rule: the model's own check refuses VM1's bare request.
    const bare = await Sandbox.create({
      ...connection,
      name: "vm1-no-rule",
      networkPolicy: { allow: [PACKAGE_REGISTRY, services.address, services.modelAddress] },
    });
    expect((await run(bare, ask())).stdout).toMatch(/missing or wrong API key.* 401$/);
    expect(services.model.refused()).toBe(refusedBefore + 1);

    // The API front beside it keeps its own TLS: its CA alone verifies what VM1 reaches (a terminated connection
    // would present a leaf of the emulator's CA, and curl would fail the handshake).
    await vm1.writeFiles([{ path: "/tmp/front-ca.pem", content: Buffer.from(services.front.caPem) }]);
    const front = await run(
      vm1,
      `curl -sS --max-time 20 -o /dev/null -w '%{http_code}' --cacert /tmp/front-ca.pem ${services.front.url}/v1/sandboxes`,
    );
    expect(front.stderr).toBe("");
    expect(front.stdout).toMatch(/^[1-5]\d\d$/);

    // VM1 never saw the key: not in any process environment there, nor in any file of its disk (read on this
    // machine, where the emulator keeps it; a value VM1 did write is found by the same scan).
    const environ = await run(vm1, "cat /proc/[0-9]*/environ 2>/dev/null | tr '\\0' '\\n'", true);
    expect(environ.stdout).toContain("HTTP_PROXY=");
    expect(environ.stdout).not.toContain(services.modelKey);
    const planted = `planted-${randomBytes(12).toString("hex")}`;
    await vm1.writeFiles([{ path: "/vercel/sandbox/planted.txt", content: Buffer.from(planted) }]);
    const disk = await vm1OnDisk(emulatorDataDir(dir), "vm1-model-key", [], {});
    expect(disk.sandboxDirs).toHaveLength(1);
    expect((await filesHolding(disk.sandboxDirs, planted)).map((f) => path.basename(f))).toEqual(["planted.txt"]);
    expect(await filesHolding(disk.sandboxDirs, services.modelKey)).toEqual([]);
  });
});
