// The model's API key never sits on VM1 (seed 000: the host "injects Slack/model credentials through the
// firewall"): the scripted model refuses requests without the key, VM1 holds none, and wakeVm sets a firewall
// rule that adds it on the way out, so the woken gateway's request succeeds while the key is on no disk of
// VM1 or its checkpoints (the emulator's whole data dir is searched).
import { execFile } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { Sandbox } from "@vercel/sandbox";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type LocalSandboxApi, startLocalSandboxApi } from "../../src/emulator/index.js";
import { sleepVm, type VmConnection, wakeVm } from "../../src/host/index.js";
import { type ScriptedModel, startScriptedModel } from "../../src/main-job/model.js";

const KEY = `sk-model-${randomBytes(16).toString("hex")}`;
const NAME = "vm1-credential";
/** Inside a sandbox 127.0.0.1 is its own loopback: clearing NO_PROXY sends the host's through the firewall. */
const THROUGH_PROXY = { NO_PROXY: "", no_proxy: "" };

let api: LocalSandboxApi;
let model: ScriptedModel;
let dataDir: string;
let connection: VmConnection;

beforeAll(async () => {
  dataDir = await mkdtemp(path.join(tmpdir(), "model-credential-"));
  api = await startLocalSandboxApi({ dataDir });
  model = await startScriptedModel("127.0.0.1", { apiKey: KEY });
  connection = { ...api.credentials, fetch: api.fetch };
}, 60_000);

afterAll(async () => {
  await model?.close();
  await api?.close();
  await rm(dataDir, { recursive: true, force: true });
}, 60_000);

const ask = (reply?: string) =>
  `curl -sS --max-time 20 -w ' %{http_code}' -H 'content-type: application/json' ` +
  `-d '{"messages":[{"role":"user","content":"hi"}]}' ${model.baseUrl}/chat/completions${reply ? ` > ${reply}` : ""}`;

describe("the model credential is injected by the firewall, never held by VM1", () => {
  it("a request from VM1 without the rule is refused; after wakeVm sets the rule it is answered", {
    timeout: 180_000,
  }, async () => {
    const vm = await Sandbox.create({ ...connection, name: NAME, networkPolicy: { allow: ["127.0.0.1"] } });
    const before = await vm.runCommand({ cmd: "sh", args: ["-c", ask()], env: THROUGH_PROXY });
    expect(await before.stdout()).toMatch(/missing or wrong API key.* 401$/);
    expect(model.refused()).toBe(1);

    await sleepVm({ connection, name: NAME });
    const rule = {
      match: { path: { startsWith: "/v1/" } },
      transform: [{ headers: { authorization: `Bearer ${KEY}` } }],
    };
    await wakeVm({
      connection,
      name: NAME,
      networkPolicy: { allow: { "127.0.0.1": [rule] } },
      start: { cmd: "sh", args: ["-c", ask("/vercel/sandbox/reply")], env: THROUGH_PROXY },
      ready: async (box) => (await box.runCommand("test", ["-s", "/vercel/sandbox/reply"])).exitCode === 0,
      timeoutMs: 60_000,
      pollMs: 100,
    });
    const woken = await Sandbox.get({ ...connection, name: NAME });
    const reply = await (await woken.runCommand("cat", ["/vercel/sandbox/reply"])).stdout();
    expect(reply).toMatch(/Hello from the scripted model\..* 200$/);
    expect(model.refused()).toBe(1);

    const inside = await woken.runCommand({
      cmd: "sh",
      args: [
        "-c",
        `{ env; cat /proc/[0-9]*/environ; grep -rsF -- '${KEY}' /vercel /home /root /tmp /etc /var; } | grep -cF -- '${KEY}' || true`,
      ],
      sudo: true,
    });
    expect((await inside.stdout()).trim()).toBe("0");
    await sleepVm({ connection, name: NAME });
    const onDisk = await promisify(execFile)("grep", ["-rlF", "--", KEY, dataDir]).then(
      ({ stdout }) => stdout,
      (error: { code?: number; stdout?: string }) => (error.code === 1 ? "" : `grep failed: ${error.stdout}`),
    );
    expect(onDisk).toBe("");
  });
});
