// What the Codex remote-exec spec adds to a WorkerGateway: the release pair it runs on, the gateway config that
// makes the Codex harness own OpenAI turns and send every model request to a scripted Responses server, and
// the approvals surface (a launch of the node exec-server is a critical plugin approval, one per attempt).
import fs from "node:fs/promises";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { CODEX_PLUGIN_SPEC, codexConfig } from "../../../src/main-job/codex-config.js";
import type { GatewayHarness } from "../gateway-harness.js";
import { ChildProcesses } from "../processes.js";
import { waitFor } from "../wait.js";

export {
  CODEX_GATEWAY_VERSION,
  CODEX_MODEL,
  CODEX_PLUGIN_SPEC,
  EXEC_SERVER_COMMAND,
} from "../../../src/main-job/codex-config.js";

/**
 * Readies a gateway (not yet started) for Codex remote-exec: @openclaw/codex from the registry (core carries a
 * plugin to the node only when it is an official registry install, never a path or npm-pack install), and an
 * OpenAI API-key auth profile holding `apiKey` (Codex remote-exec on a cloud placement refuses to run without
 * prepared OpenAI auth). The key reaches the CLI on stdin from a 0600 file that is removed at once.
 */
export async function prepareCodexGateway(gw: GatewayHarness, apiKey: string): Promise<void> {
  await gw.ocOk(["plugins", "install", CODEX_PLUGIN_SPEC, "--accept-capabilities"], { timeoutMs: 600_000 });
  const keyFile = path.join(gw.runDir, "openai-key");
  await fs.writeFile(keyFile, `${apiKey}\n`, { mode: 0o600 });
  try {
    const pasted = await gw.run(
      "sh",
      [
        "-c",
        'exec "$0" "$1" models auth paste-api-key --provider openai < "$2"',
        process.execPath,
        gw.openclawEntry,
        keyFile,
      ],
      { timeoutMs: 120_000 },
    );
    if (pasted.code !== 0) throw new Error(gw.describeFailure("models auth paste-api-key", pasted));
  } finally {
    await fs.rm(keyFile, { force: true });
  }
}

/** Gateway config for Codex turns against `baseUrl` (a scripted Responses server on the gateway's loopback). */
export function codexGatewayConfig(baseUrl: string): Record<string, unknown> {
  const codex = codexConfig(baseUrl);
  return {
    ...codex,
    gateway: {
      // The test host's pairing settings (test-host.ts) plus the exec-server command allowance.
      nodes: { pairing: { sshVerify: false, autoApproveLocal: false }, commands: codex.gateway.nodes.commands },
      http: { endpoints: { chatCompletions: { enabled: true } } },
    },
  };
}

/**
 * A connected approvals client (approver.mjs) for the gateway under test. Without one, core denies the critical
 * exec-server approval at once ("no-approval-route"). The n-th approval requested gets the n-th decision given
 * to decide(); events() is what it printed.
 */
export class Approver {
  readonly #processes = new ChildProcesses((text) => text);
  readonly #decisions: string;
  readonly #requests: string;
  #requested = 0;
  readonly #lines: Array<Record<string, unknown>> = [];
  #given = 0;

  private constructor(decisions: string, requests: string) {
    this.#decisions = decisions;
    this.#requests = requests;
  }

  static async start(gw: GatewayHarness, tlsFingerprint: string): Promise<Approver> {
    const approver = new Approver(path.join(gw.runDir, "approval-decisions"), path.join(gw.runDir, "admin-requests"));
    await fs.writeFile(approver.#decisions, "", { mode: 0o600 });
    await fs.writeFile(approver.#requests, "", { mode: 0o600 });
    const sdk = path.join(path.dirname(gw.openclawEntry), "dist", "plugin-sdk", "gateway-runtime.js");
    const child = approver.#processes.spawn(
      process.execPath,
      [
        fileURLToPath(new URL("./approver.mjs", import.meta.url)),
        sdk,
        gw.configPath,
        approver.#decisions,
        `wss://127.0.0.1:${gw.port}`,
        tlsFingerprint,
        approver.#requests,
      ],
      { cwd: gw.runDir, env: gw.baseEnv() },
    );
    let buffered = "";
    child.stdout?.on("data", (chunk: Buffer) => {
      buffered += chunk.toString("utf8");
      const lines = buffered.split("\n");
      buffered = lines.pop() ?? "";
      for (const line of lines) {
        try {
          approver.#lines.push(JSON.parse(line) as Record<string, unknown>);
        } catch {
          // Not one of its lines (a library's log): ignored.
        }
      }
    });
    child.stderr?.resume();
    await waitFor("the approver to connect", async () => approver.#event("ready") ?? approver.#failed(), {
      timeoutMs: 120_000,
    });
    return approver;
  }

  /** Queues the decision for the next approval requested. */
  async decide(decision: "allow-once" | "deny"): Promise<void> {
    this.#given += 1;
    await fs.appendFile(this.#decisions, `${decision}\n`);
  }

  /** A gateway call on its operator.admin connection (e.g. chat.abort of another connection's run). */
  async request(method: string, params: unknown): Promise<void> {
    const index = this.#requested++;
    await fs.appendFile(this.#requests, `${JSON.stringify({ method, params })}\n`);
    const answer = await waitFor(
      `the approver's answer to ${method}`,
      async () => this.#lines.find((l) => l.event === "response" && l.index === index),
      { timeoutMs: 120_000 },
    );
    if (answer.ok !== true) throw new Error(`${method} failed: ${String(answer.message)}`);
  }

  /** How many approvals it has resolved, with which decisions. */
  resolved(): string[] {
    return this.#lines.filter((l) => l.event === "resolved").map((l) => String(l.decision));
  }

  requested(): number {
    return this.#lines.filter((l) => l.event === "plugin.approval.requested").length;
  }

  events(): Array<Record<string, unknown>> {
    return [...this.#lines];
  }

  #event(name: string): true | undefined {
    return this.#lines.some((l) => l.event === name) ? true : undefined;
  }

  #failed(): undefined {
    const failed = this.#lines.find((l) => l.event === "connect-error");
    if (failed) throw new Error(`the approver could not connect: ${String(failed.message)}`);
    return undefined;
  }

  stop(): Promise<void> {
    return this.#processes.terminateAll();
  }
}
